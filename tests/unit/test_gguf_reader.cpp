// The GGUF reader on the two real files we ship or fetch: header, metadata, tensor infos, data.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "core/gguf/gguf_file.h"
#include "tests/support/test_models.h"

namespace inferscope {
namespace {

using test::demo_model_path;
using test::shared_model_path;

std::vector<int64_t> dims_of(const GgufFile& f, const std::string& name) { return f.tensor(name).dims; }

TEST(GgufReader, Stories260KHeaderAndMetadata) {
  INFERSCOPE_REQUIRE_FILE(path, shared_model_path("stories260K.gguf"));
  const auto f = GgufFile::open(path);
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->metadata().size(), 19u);
  EXPECT_EQ(f->tensors().size(), 48u);
  EXPECT_FALSE(f->has("general.alignment"));
  EXPECT_EQ(f->alignment(), 32u);
  EXPECT_EQ(f->data_offset(), 14176u);
  EXPECT_EQ(f->file_size(), 1185376u);

  // Metadata keeps file order: the tokenizer arrays come first in this file.
  EXPECT_EQ(f->metadata().front().first, "tokenizer.ggml.tokens");
  EXPECT_EQ(f->get_string("general.architecture"), "llama");
  EXPECT_EQ(f->get_int("llama.block_count"), 5);
  EXPECT_EQ(f->get_int("llama.attention.head_count_kv"), 4);
  EXPECT_EQ(f->get_int("tokenizer.ggml.padding_token_id"), 4294967295);  // uint32 zero-extended
  EXPECT_FLOAT_EQ(static_cast<float>(f->get_float("llama.attention.layer_norm_rms_epsilon")), 1e-5f);

  const GgufArray& tokens = f->get_array("tokenizer.ggml.tokens");
  EXPECT_EQ(tokens.elem_type, GgufType::STRING);
  ASSERT_EQ(tokens.items.size(), 512u);
  EXPECT_EQ(tokens.items[0].as_string(), "<unk>");
  EXPECT_EQ(tokens.items[3].as_string(), "<0x00>");
  const GgufArray& scores = f->get_array("tokenizer.ggml.scores");
  EXPECT_EQ(scores.elem_type, GgufType::FLOAT32);
  EXPECT_EQ(scores.items.size(), 512u);
  const GgufArray& types = f->get_array("tokenizer.ggml.token_type");
  EXPECT_EQ(types.elem_type, GgufType::INT32);
  EXPECT_EQ(types.items[0].as_int(), 2);  // <unk> is UNKNOWN
}

TEST(GgufReader, Stories260KTensors) {
  INFERSCOPE_REQUIRE_FILE(path, shared_model_path("stories260K.gguf"));
  const auto f = GgufFile::open(path);
  for (const auto& t : f->tensors()) {
    EXPECT_EQ(t.type, DType::F32) << t.name;
    EXPECT_EQ(t.n_bytes, static_cast<size_t>(t.n_elements()) * 4) << t.name;
    EXPECT_EQ(t.offset % 32, 0u) << t.name;
    // The first tensor sits at offset 0, so every pointer is first + offset.
    EXPECT_EQ(t.data - f->tensors().front().data, static_cast<ptrdiff_t>(t.offset)) << t.name;
  }
  EXPECT_EQ(dims_of(*f, "blk.0.attn_k.weight"), (std::vector<int64_t>{64, 32}));
  EXPECT_EQ(dims_of(*f, "blk.0.attn_q.weight"), (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(dims_of(*f, "blk.4.ffn_down.weight"), (std::vector<int64_t>{172, 64}));
  EXPECT_EQ(dims_of(*f, "output_norm.weight"), (std::vector<int64_t>{64}));
  EXPECT_EQ(dims_of(*f, "token_embd.weight"), (std::vector<int64_t>{64, 512}));
  EXPECT_EQ(f->tensor("token_embd.weight").n_elements(), 64 * 512);
  EXPECT_EQ(f->find_tensor("blk.5.attn_q.weight"), nullptr);
  EXPECT_EQ(f->tensor("token_embd.weight").data, f->tensors().front().data);
}

// The embedding in the GGUF file must be byte-identical to the one in the llama2.c checkpoint
// of the same model (after its 7-int header): this checks that data pointers land right.
TEST(GgufReader, Stories260KEmbeddingMatchesCheckpoint) {
  INFERSCOPE_REQUIRE_FILE(path, shared_model_path("stories260K.gguf"));
  INFERSCOPE_REQUIRE_FILE(bin_path, shared_model_path("stories260K.bin"));
  const auto f = GgufFile::open(path);
  std::ifstream in(bin_path, std::ios::binary);
  const std::vector<char> bin((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const GgufTensorInfo& emb = f->tensor("token_embd.weight");
  ASSERT_GE(bin.size(), 28 + emb.n_bytes);
  EXPECT_EQ(std::memcmp(emb.data, bin.data() + 28, emb.n_bytes), 0);
  float first = 0;
  std::memcpy(&first, emb.data, sizeof first);
  EXPECT_FLOAT_EQ(first, -0.29474878f);
}

TEST(GgufReader, DemoModel) {
  INFERSCOPE_REQUIRE_FILE(path, demo_model_path());
  const auto f = GgufFile::open(path);
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->tensors().size(), 272u);
  EXPECT_EQ(f->metadata().size(), 33u);
  EXPECT_EQ(f->alignment(), 32u);
  EXPECT_EQ(f->get_int("llama.block_count"), 30);
  EXPECT_EQ(f->get_int("llama.embedding_length"), 576);
  EXPECT_EQ(f->get_string("tokenizer.ggml.model"), "gpt2");
  EXPECT_FALSE(f->get_bool("tokenizer.ggml.add_bos_token"));
  EXPECT_DOUBLE_EQ(f->get_float("llama.rope.freq_base"), 100000.0);

  const GgufTensorInfo& emb = f->tensor("token_embd.weight");
  EXPECT_EQ(emb.type, DType::Q8_0);
  EXPECT_EQ(emb.dims, (std::vector<int64_t>{576, 49152}));
  EXPECT_EQ(emb.n_bytes, 576u / 32 * 34 * 49152);
  const GgufTensorInfo& down = f->tensor("blk.0.ffn_down.weight");
  EXPECT_EQ(down.type, DType::Q4_1);
  EXPECT_EQ(down.dims, (std::vector<int64_t>{1536, 576}));
  EXPECT_EQ(down.n_bytes, 1536u / 32 * 20 * 576);
  EXPECT_EQ(f->tensor("blk.29.attn_norm.weight").type, DType::F32);

  const GgufArray& tokens = f->get_array("tokenizer.ggml.tokens");
  EXPECT_EQ(tokens.elem_type, GgufType::STRING);
  ASSERT_EQ(tokens.items.size(), 49152u);
  EXPECT_EQ(tokens.items[0].as_string(), "<|endoftext|>");
  EXPECT_EQ(tokens.items[1].as_string(), "<|im_start|>");
  EXPECT_EQ(f->get_array("tokenizer.ggml.merges").items.size(), 48900u);

  // Every tensor lies inside the file and the data section is the aligned end of the header.
  for (const auto& t : f->tensors()) {
    EXPECT_LE(f->data_offset() + t.offset + t.n_bytes, f->file_size()) << t.name;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data) % 32, 0u) << t.name;
  }
}

TEST(GgufReader, TypedGettersNameFileAndKey) {
  INFERSCOPE_REQUIRE_FILE(path, shared_model_path("stories260K.gguf"));
  const auto f = GgufFile::open(path);
  const auto message = [](auto&& fn) {
    try {
      fn();
    } catch (const GgufError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([&] { f->get_int("llama.no_such_key"); }), path + ": metadata 'llama.no_such_key': key is missing");
  EXPECT_EQ(message([&] { f->get_int("general.name"); }), path + ": metadata 'general.name': string is not an integer");
  EXPECT_EQ(message([&] { f->get_string("llama.block_count"); }),
            path + ": metadata 'llama.block_count': uint32 is not a string");
  EXPECT_EQ(message([&] { f->get_bool("llama.block_count"); }), path + ": metadata 'llama.block_count': uint32 is not a bool");
  EXPECT_EQ(message([&] { f->get_array("general.name"); }), path + ": metadata 'general.name': string is not an array");
  EXPECT_EQ(message([&] { f->get_float("tokenizer.ggml.tokens"); }),
            path + ": metadata 'tokenizer.ggml.tokens': array is not a number");
  EXPECT_EQ(message([&] { f->tensor("nope"); }), path + ": tensor 'nope': not in the file");

  // The _or forms fall back only when the key is absent, never when its type is wrong.
  EXPECT_EQ(f->get_int_or("llama.no_such_key", 7), 7);
  EXPECT_EQ(f->get_int_or("llama.block_count", 7), 5);
  EXPECT_DOUBLE_EQ(f->get_float_or("llama.rope.freq_base", 10000.0), 10000.0);
  EXPECT_TRUE(f->get_bool_or("tokenizer.ggml.add_bos_token", true));
  EXPECT_EQ(f->get_string_or("general.name", "x"), "llama");
  EXPECT_EQ(f->get_string_or("general.license", "none"), "none");
  EXPECT_THROW(f->get_string_or("llama.block_count", "x"), GgufError);
  EXPECT_THROW(f->get_int_or("general.name", 1), GgufError);
}

TEST(GgufValue, DisplayString) {
  EXPECT_EQ(GgufValue::u32(7).to_display_string(), "7");
  EXPECT_EQ(GgufValue::i32(-3).to_display_string(), "-3");
  EXPECT_EQ(GgufValue::boolean(true).to_display_string(), "true");
  EXPECT_EQ(GgufValue::f32(0.5f).to_display_string(), "0.5");
  EXPECT_EQ(GgufValue::str("a\"b\n").to_display_string(), "\"a\\\"b\\x0a\"");
  EXPECT_EQ(GgufValue::i32s({1, 2, 3}).to_display_string(), "[1, 2, 3]");
  EXPECT_EQ(GgufValue::i32s({1, 2, 3, 4}).to_display_string(2), "[1, 2, ... 4 items]");
  EXPECT_EQ(GgufValue::str(std::string(100, 'x')).to_display_string(), "\"" + std::string(64, 'x') + "...\"");
}

TEST(GgufValue, Conversions) {
  EXPECT_EQ(GgufValue::u64(1ull << 40).as_int(), int64_t{1} << 40);
  EXPECT_THROW(GgufValue::u64(~0ull).as_int(), std::runtime_error);  // does not fit in int64
  EXPECT_DOUBLE_EQ(GgufValue::i32(-4).as_float(), -4.0);           // integers convert to float
  EXPECT_THROW(GgufValue::f32(1.0f).as_int(), std::runtime_error);  // floats never become integers
  EXPECT_THROW(GgufValue::u32(1).as_bool(), std::runtime_error);
  EXPECT_TRUE(GgufValue::u32(1).is_integer());
  EXPECT_TRUE(GgufValue::f32(1).is_float());
  EXPECT_FALSE(GgufValue::str("1").is_integer());
  EXPECT_EQ(GgufValue::strings({"a", "b"}), GgufValue::array(GgufType::STRING, {GgufValue::str("a"), GgufValue::str("b")}));
  EXPECT_FALSE(GgufValue::u32(1) == GgufValue::u64(1));  // same number, different type id
}

}  // namespace
}  // namespace inferscope
