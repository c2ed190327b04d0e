// Malformed GGUF input: every problem gives a GgufError naming the field, none crashes or
// allocates absurdly. Images are parsed from exact-size heap buffers so ASan sees any overread.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/gguf/gguf_file.h"
#include "core/gguf/gguf_writer.h"

namespace inferscope {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kHuge = uint64_t{1} << 60;

// Hand-assembles GGUF bytes, so tests can put any value in any field.
struct Raw {
  std::vector<uint8_t> b;

  template <typename T>
  Raw& put(T x) {
    const size_t at = b.size();
    b.resize(at + sizeof(T));
    std::memcpy(b.data() + at, &x, sizeof(T));
    return *this;
  }
  Raw& u32(uint32_t x) { return put(x); }
  Raw& u64(uint64_t x) { return put(x); }
  Raw& str(const std::string& s) {
    u64(s.size());
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  Raw& header(uint32_t version, uint64_t n_tensors, uint64_t n_kv) {
    b = {'G', 'G', 'U', 'F'};
    return u32(version).u64(n_tensors).u64(n_kv);
  }
  Raw& kv_u32(const std::string& key, uint32_t v) { return str(key).u32(static_cast<uint32_t>(GgufType::UINT32)).u32(v); }
  Raw& tensor(const std::string& name, const std::vector<uint64_t>& dims, uint32_t type, uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(dims.size()));
    for (uint64_t d : dims) u64(d);
    return u32(type).u64(offset);
  }
  Raw& pad(uint64_t align) {
    b.resize((b.size() + align - 1) / align * align, 0);
    return *this;
  }
  Raw& zeros(size_t n) {
    b.resize(b.size() + n, 0);
    return *this;
  }
};

// Parses `bytes` as "m.gguf" and returns the error message, or "no error".
std::string error_of(const std::vector<uint8_t>& bytes) {
  // A heap copy of exactly this size: a read one byte past the end trips ASan.
  const auto copy = std::make_unique<uint8_t[]>(bytes.size());
  if (!bytes.empty()) std::memcpy(copy.get(), bytes.data(), bytes.size());
  try {
    GgufFile::open_bytes(copy.get(), bytes.size(), "m.gguf");
  } catch (const GgufError& e) {
    return e.what();
  }
  return "no error";
}

#define EXPECT_ERROR_HAS(bytes, ...)                                                   \
  do {                                                                                 \
    const std::string msg_ = error_of(bytes);                                          \
    for (const char* needle_ : {__VA_ARGS__})                                          \
      EXPECT_NE(msg_.find(needle_), std::string::npos) << "'" << needle_ << "' not in: " << msg_; \
  } while (0)

// One F32 tensor "w" of `dims` at `offset`, with `data_bytes` of data after the aligned header.
std::vector<uint8_t> one_tensor(const std::vector<uint64_t>& dims, uint32_t type = 0, uint64_t offset = 0, size_t data_bytes = 32) {
  Raw r;
  r.header(3, 1, 1).kv_u32("k", 1).tensor("w", dims, type, offset).pad(32).zeros(data_bytes);
  return r.b;
}

TEST(GgufMalformed, HandBuiltBaselineIsValid) {
  EXPECT_EQ(error_of(one_tensor({8})), "no error");
  EXPECT_EQ(error_of(Raw().header(2, 0, 0).b), "no error");  // v2, empty
}

// A small but complete file: metadata of several types, an array, and three tensors.
std::vector<uint8_t> small_valid_file() {
  const fs::path p = fs::temp_directory_path() / ("inferscope_gguf_small_" + std::to_string(::getpid()) + ".gguf");
  GgufWriter w;
  w.set("general.architecture", GgufValue::str("llama"));
  w.set("llama.block_count", GgufValue::u32(1));
  w.set("tokenizer.ggml.tokens", GgufValue::strings({"<s>", "a", "bc"}));
  w.set("nested", GgufValue::array(GgufType::ARRAY, {GgufValue::f32s({1.0f}), GgufValue::f32s({})}));
  w.add_tensor_f32("a", {3, 2}, {1, 2, 3, 4, 5, 6});
  w.add_tensor("b", DType::Q8_0, {32}, std::vector<uint8_t>(34, 7));
  w.add_tensor_f32("c", {8}, std::vector<float>(8, 0.5f));  // 32 bytes: the file ends exactly at its data
  w.write(p.string());
  std::ifstream in(p, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  fs::remove(p);
  return bytes;
}

TEST(GgufMalformed, EveryTruncationIsAnError) {
  const auto full = small_valid_file();
  ASSERT_EQ(error_of(full), "no error");
  for (size_t n = 0; n < full.size(); ++n) {
    const std::vector<uint8_t> prefix(full.begin(), full.begin() + static_cast<ptrdiff_t>(n));
    const std::string msg = error_of(prefix);
    EXPECT_EQ(msg.rfind("m.gguf: ", 0), 0u) << "prefix " << n << ": " << msg;
  }
}

TEST(GgufMalformed, TruncationMessagesNameTheField) {
  const auto full = small_valid_file();
  const auto cut = [&](size_t n) { return std::vector<uint8_t>(full.begin(), full.begin() + static_cast<ptrdiff_t>(n)); };
  EXPECT_ERROR_HAS(cut(2), "magic", "truncated");
  EXPECT_ERROR_HAS(cut(6), "version", "truncated");
  EXPECT_ERROR_HAS(cut(10), "tensor count", "truncated");
  EXPECT_ERROR_HAS(cut(30), "metadata count", "4 is more than the 6 bytes left");  // counts checked first
  EXPECT_ERROR_HAS(cut(175), "metadata 'tokenizer.ggml.tokens'", "string length 2 runs past the end");  // "bc"
  EXPECT_ERROR_HAS(cut(full.size() - 1), "tensor 'c'", "runs past the end");
}

TEST(GgufMalformed, FileSystemProblems) {
  const fs::path dir = fs::temp_directory_path() / ("inferscope_gguf_fs_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string empty = (dir / "empty.gguf").string();
  std::ofstream(empty).close();
  const auto message = [](const std::string& path) {
    try {
      GgufFile::open(path);
    } catch (const GgufError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(empty), empty + ": file: is empty");
  EXPECT_EQ(message(dir.string()), dir.string() + ": file: is not a regular file");
  const std::string missing = (dir / "missing.gguf").string();
  EXPECT_EQ(message(missing), missing + ": file: cannot open: No such file or directory");
  // A truncated file on disk goes through mmap and fails like the in-memory image.
  const std::string cut = (dir / "cut.gguf").string();
  const auto full = small_valid_file();
  std::ofstream(cut, std::ios::binary).write(reinterpret_cast<const char*>(full.data()), 100);
  EXPECT_EQ(message(cut).rfind(cut + ": ", 0), 0u);
  EXPECT_NE(message(cut), "no error");
  fs::remove_all(dir);
}

TEST(GgufMalformed, Header) {
  Raw bad_magic;
  bad_magic.header(3, 0, 0).b[3] = 'L';
  EXPECT_EQ(error_of(bad_magic.b), "m.gguf: magic: 'GGUL' is not 'GGUF' (not a GGUF file)");
  EXPECT_ERROR_HAS(Raw().header(1, 0, 0).b, "version: 1", "no longer supported");
  EXPECT_ERROR_HAS(Raw().header(4, 0, 0).b, "version: 4 is not supported");
  EXPECT_ERROR_HAS(Raw().header(0x03000000, 0, 0).b, "version", "big-endian");
  EXPECT_ERROR_HAS(Raw().header(3, kHuge, 0).b, "tensor count", "1152921504606846976");
  EXPECT_ERROR_HAS(Raw().header(3, 0, kHuge).b, "metadata count", "1152921504606846976");
  EXPECT_ERROR_HAS(Raw().header(3, 0, ~uint64_t{0}).b, "metadata count");
}

TEST(GgufMalformed, StringAndArrayLengths) {
  // (zeros after each length so the header's count checks pass and the length itself is judged)
  EXPECT_ERROR_HAS(Raw().header(3, 0, 1).u64(kHuge).zeros(16).b, "metadata #0 key", "string length 1152921504606846976");
  const auto with_value = [](uint32_t type) { return Raw().header(3, 0, 1).str("key.x").u32(type); };
  EXPECT_ERROR_HAS(with_value(8).u64(kHuge).b, "metadata 'key.x'", "string length");
  // Arrays of 2^60 strings, bytes, and arrays: refused before any allocation.
  EXPECT_ERROR_HAS(with_value(9).u32(8).u64(kHuge).b, "metadata 'key.x'", "array length 1152921504606846976");
  EXPECT_ERROR_HAS(with_value(9).u32(0).u64(kHuge).b, "metadata 'key.x'", "array length");
  EXPECT_ERROR_HAS(with_value(9).u32(9).u64(kHuge).b, "metadata 'key.x'", "array length");
  // 16 uint32 values need 64 bytes; 63 are there.
  EXPECT_ERROR_HAS(with_value(9).u32(4).u64(16).zeros(63).b, "metadata 'key.x'", "array length 16");
  EXPECT_EQ(error_of(with_value(9).u32(4).u64(16).zeros(64).b), "no error");
  // An array the file could hold, but whose in-memory form (~50 bytes per item) would be too big.
  EXPECT_ERROR_HAS(with_value(9).u32(0).u64((uint64_t{1} << 24) + 1).zeros((size_t{1} << 24) + 1).b, "metadata 'key.x'",
                   "array length 16777217 is more than the limit of 16777216");
  EXPECT_ERROR_HAS(Raw().header(3, 1, 0).u64(kHuge).zeros(32).b, "tensor #0 name", "string length");
}

TEST(GgufMalformed, ValueTypes) {
  const auto with_value = [](uint32_t type) { return Raw().header(3, 0, 1).str("key.x").u32(type); };
  EXPECT_EQ(error_of(with_value(13).u32(0).b), "m.gguf: metadata 'key.x': value type 13 is unknown");
  EXPECT_ERROR_HAS(with_value(9).u32(99).u64(0).b, "metadata 'key.x'", "value type 99 is unknown");
  EXPECT_ERROR_HAS(with_value(7).put<uint8_t>(2).b, "metadata 'key.x'", "bool value 2");
  // Eight levels of nesting are fine, nine are refused.
  const auto nested = [&](int levels) {
    Raw r = with_value(9);
    for (int i = 1; i < levels; ++i) r.u32(9).u64(1);
    return r.u32(4).u64(0).b;
  };
  EXPECT_EQ(error_of(nested(8)), "no error");
  EXPECT_ERROR_HAS(nested(9), "metadata 'key.x'", "nested deeper than 8");
}

TEST(GgufMalformed, DuplicatesAndAlignment) {
  EXPECT_EQ(error_of(Raw().header(3, 0, 2).kv_u32("a", 1).kv_u32("a", 2).b), "m.gguf: metadata 'a': key appears twice");
  Raw dup_tensor;
  dup_tensor.header(3, 2, 0).tensor("w", {8}, 0, 0).tensor("w", {8}, 0, 32).pad(32).zeros(64);
  EXPECT_EQ(error_of(dup_tensor.b), "m.gguf: tensor 'w': name appears twice");

  const auto aligned = [](uint32_t a) { return Raw().header(3, 0, 1).kv_u32("general.alignment", a).b; };
  EXPECT_EQ(error_of(aligned(0)), "m.gguf: metadata 'general.alignment': 0 is not a positive power of two");
  EXPECT_ERROR_HAS(aligned(48), "general.alignment", "48 is not a positive power of two");
  EXPECT_EQ(error_of(aligned(64)), "no error");
  const auto neg = Raw().header(3, 0, 1).str("general.alignment").u32(5).put<int32_t>(-32).b;
  EXPECT_ERROR_HAS(neg, "general.alignment", "-32 is not");
  const auto text = Raw().header(3, 0, 1).str("general.alignment").u32(8).str("32").b;
  EXPECT_ERROR_HAS(text, "general.alignment", "string is not an integer");
}

// Alignments below 8 would let tensor data start at any address, read through an element cast.
TEST(GgufMalformed, AlignmentBelowEightIsRefused) {
  const auto aligned = [](uint32_t a) { return Raw().header(3, 0, 1).kv_u32("general.alignment", a).b; };
  EXPECT_EQ(error_of(aligned(1)),
            "m.gguf: metadata 'general.alignment': 1 is not a multiple of 8 (tensor data would be misaligned)");
  EXPECT_ERROR_HAS(aligned(4), "general.alignment", "4 is not a multiple of 8");
  EXPECT_ERROR_HAS(aligned(12), "general.alignment", "12 is not a positive power of two");
  EXPECT_EQ(error_of(aligned(8)), "no error");

  // With alignment 1 this f32 tensor's data would begin right after the infos, at a float-misaligned offset.
  Raw misaligned;
  misaligned.header(3, 1, 1).kv_u32("general.alignment", 1).tensor("w", {2}, 0, 0);
  ASSERT_NE(misaligned.b.size() % alignof(float), 0u);
  misaligned.zeros(2 * sizeof(float));
  EXPECT_ERROR_HAS(misaligned.b, "general.alignment", "1 is not a multiple of 8");

  // The writer applies the same rule with the same words.
  for (uint32_t a : {1u, 4u, 12u}) {
    GgufWriter w;
    w.set("general.alignment", GgufValue::u32(a));
    const fs::path p = fs::temp_directory_path() / ("inferscope_gguf_align_" + std::to_string(::getpid()) + ".gguf");
    try {
      w.write(p.string());
      ADD_FAILURE() << "alignment " << a << " was written";
    } catch (const std::invalid_argument& e) {
      const std::string reader_error = error_of(aligned(a));
      EXPECT_EQ(std::string("m.gguf: ") + e.what(), reader_error);
    }
    EXPECT_FALSE(fs::exists(p));
  }
}

TEST(GgufMalformed, TensorInfos) {
  EXPECT_ERROR_HAS(one_tensor({8, 1, 1, 1, 1}), "tensor 'w'", "n_dims 5 is not in 1..4");
  EXPECT_ERROR_HAS(one_tensor({}), "tensor 'w'", "n_dims 0");
  EXPECT_ERROR_HAS(one_tensor({8}, 0, 64), "tensor 'w'", "offset 64", "runs past the end");
  EXPECT_ERROR_HAS(one_tensor({9}), "tensor 'w'", "runs past the end");  // 36 bytes, 32 there
  EXPECT_ERROR_HAS(one_tensor({8}, 0, ~uint64_t{0} - 31), "tensor 'w'", "runs past the end");  // offset + data wraps
  EXPECT_EQ(error_of(one_tensor({4}, 0, 4)), "m.gguf: tensor 'w': offset 4 is not a multiple of the alignment 32");
  EXPECT_ERROR_HAS(one_tensor({uint64_t{1} << 32, uint64_t{1} << 32}), "tensor 'w'", "overflow the element count");
  EXPECT_ERROR_HAS(one_tensor({3, uint64_t{1} << 62}), "tensor 'w'", "overflow the element count");  // > int64
  EXPECT_ERROR_HAS(one_tensor({uint64_t{1} << 62}), "tensor 'w'", "overflow the byte size");       // 2^64 bytes
  EXPECT_ERROR_HAS(one_tensor({~uint64_t{0}}), "tensor 'w'", "dim 0 is 18446744073709551615");
  EXPECT_ERROR_HAS(one_tensor({31}, 2), "tensor 'w'", "dim 0 (31)", "q4_0 block size 32");

  Raw unknown;
  unknown.header(3, 1, 0).tensor("blk.0.attn_q.weight", {8}, 99, 0).pad(32).zeros(32);
  EXPECT_EQ(error_of(unknown.b), "m.gguf: tensor 'blk.0.attn_q.weight': type 99 is unknown");
}

// Random byte flips of a valid file: each result opens or throws GgufError, and nothing else
// (no crash, no other exception, no sanitizer report).
TEST(GgufMalformed, RandomMutationsNeverCrash) {
  const auto full = small_valid_file();
  std::mt19937 rng(1234);
  int errors = 0;
  for (int i = 0; i < 3000; ++i) {
    auto bytes = full;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      const size_t at = rng() % bytes.size();
      // Half the flips write an extreme byte, which tends to make huge counts and lengths.
      bytes[at] = (rng() & 1) ? static_cast<uint8_t>(rng()) : uint8_t{0xff};
    }
    if (error_of(bytes) != "no error") ++errors;
  }
  EXPECT_GT(errors, 0);
}

}  // namespace
}  // namespace inferscope
