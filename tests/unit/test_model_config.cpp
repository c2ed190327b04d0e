// Model files the loader must refuse, each with an error that names what is wrong, and the
// architectures' own tensors (biases, Q/K norms, RoPE factors) where they belong.
#include <gtest/gtest.h>

#include <cmath>

#include <filesystem>
#include <functional>

#include "core/gguf/gguf_file.h"
#include "core/gguf/gguf_writer.h"
#include "core/model/llama_model.h"
#include "tests/support/synthetic_model.h"

namespace inferscope::test {
namespace {

// A valid synthetic model of `spec` rewritten without the tensor `drop` and with `change` applied
// to its writer; returns the new path.
std::string rewritten_model(const std::string& name, const std::function<void(GgufWriter&)>& change,
                            const SyntheticModelSpec& spec = {}, const std::string& drop = "") {
  const std::string original = ::testing::TempDir() + "/" + name + ".orig.gguf";
  const std::string path = ::testing::TempDir() + "/" + name + ".gguf";
  write_synthetic_model(spec, original);
  {
    const auto file = GgufFile::open(original);
    GgufWriter writer;
    for (const auto& [key, value] : file->metadata()) writer.set(key, value);
    for (const GgufTensorInfo& t : file->tensors()) {
      if (t.name == drop) continue;
      writer.add_tensor(t.name, t.type, t.dims, std::vector<uint8_t>(t.data, t.data + t.n_bytes));
    }
    change(writer);
    writer.write(path);
  }
  std::filesystem::remove(original);
  return path;
}

std::string load_error(const std::string& path) {
  try {
    LlamaModel::load(path);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(ModelConfig, TheUnchangedSyntheticModelLoads) {
  EXPECT_EQ(load_error(rewritten_model("plain", [](GgufWriter&) {})), "");
}

TEST(ModelConfig, RefusesOtherArchitecturesByName) {
  const std::string path =
      rewritten_model("arch", [](GgufWriter& w) { w.set("general.architecture", GgufValue::str("mamba")); });
  const std::string error = load_error(path);
  EXPECT_NE(error.find("general.architecture"), std::string::npos) << error;
  EXPECT_NE(error.find("'mamba' is not supported (supported: llama, qwen2, qwen3, phi3, gemma3)"), std::string::npos) << error;
}

// Llama 3.1+ factors load (rope_dim / 2 positive values); anything else names the tensor.
TEST(ModelConfig, RopeFrequencyFactorsMustFitAndBePositive) {
  const auto factors = [](std::vector<float> values) {
    return [values](GgufWriter& w) { w.add_tensor_f32("rope_freqs.weight", {static_cast<int64_t>(values.size())}, values); };
  };
  EXPECT_EQ(load_error(rewritten_model("rope_freqs", factors(std::vector<float>(8, 2.0f)))), "");
  std::vector<float> negative(8, 1.0f);
  negative[5] = -1.0f;
  EXPECT_NE(load_error(rewritten_model("rope_freqs_negative", factors(negative))).find("'rope_freqs.weight': factor 5 is -1"),
            std::string::npos);
  EXPECT_NE(load_error(rewritten_model("rope_freqs_size", factors(std::vector<float>(7, 1.0f)))).find("'rope_freqs.weight': shape [7], expected [8]"),
            std::string::npos);
  SyntheticModelSpec qwen2;
  qwen2.architecture = "qwen2";
  EXPECT_NE(load_error(rewritten_model("rope_freqs_qwen2", factors(std::vector<float>(8, 2.0f)), qwen2))
                .find("RoPE frequency factors are not supported for qwen2"),
            std::string::npos);
}

// Each architecture's own tensors are required where it has them and refused where it has not.
TEST(ModelConfig, ArchitectureTensorsAreRequiredOrRefusedByName) {
  SyntheticModelSpec qwen2;
  qwen2.architecture = "qwen2";
  EXPECT_EQ(load_error(rewritten_model("qwen2", [](GgufWriter&) {}, qwen2)), "");
  EXPECT_NE(load_error(rewritten_model("qwen2_no_bias", [](GgufWriter&) {}, qwen2, "blk.1.attn_k.bias")).find("blk.1.attn_k.bias"),
            std::string::npos);
  SyntheticModelSpec qwen3;
  qwen3.architecture = "qwen3";
  qwen3.key_length = 32;
  EXPECT_EQ(load_error(rewritten_model("qwen3", [](GgufWriter&) {}, qwen3)), "");
  EXPECT_NE(load_error(rewritten_model("qwen3_no_norm", [](GgufWriter&) {}, qwen3, "blk.0.attn_q_norm.weight"))
                .find("blk.0.attn_q_norm.weight"),
            std::string::npos);
  const std::string llama_with_bias = load_error(rewritten_model("llama_bias", [](GgufWriter& w) {
    w.add_tensor_f32("blk.0.attn_q.bias", {64}, std::vector<float>(64, 0.0f));
  }));
  EXPECT_NE(llama_with_bias.find("tensor 'blk.0.attn_q.bias' is not part of the llama architecture"), std::string::npos)
      << llama_with_bias;
  const std::string values = load_error(rewritten_model("value_length", [](GgufWriter& w) {
    w.set("qwen3.attention.value_length", GgufValue::u32(16));
  }, qwen3));
  EXPECT_NE(values.find("qwen3.attention.value_length: 16 differs from key_length 32"), std::string::npos) << values;
}

TEST(ModelConfig, RefusesUnsupportedRopeScaling) {
  const std::string longrope = load_error(
      rewritten_model("longrope", [](GgufWriter& w) { w.set("llama.rope.scaling.type", GgufValue::str("longrope")); }));
  EXPECT_NE(longrope.find("rope.scaling.type: 'longrope' is not supported (supported: none, linear, yarn)"),
            std::string::npos)
      << longrope;
  const std::string no_factor = load_error(
      rewritten_model("yarn", [](GgufWriter& w) { w.set("llama.rope.scaling.type", GgufValue::str("yarn")); }));
  EXPECT_NE(no_factor.find("'llama.rope.scaling.factor': key is missing"), std::string::npos) << no_factor;
  const std::string attn_factor = load_error(rewritten_model("attn_factor", [](GgufWriter& w) {
    w.set("llama.rope.scaling.attn_factor", GgufValue::f32(1.5f));
  }));
  EXPECT_NE(attn_factor.find("rope.scaling.attn_factor: 1.5"), std::string::npos) << attn_factor;
  EXPECT_NE(attn_factor.find("only supported with YaRN"), std::string::npos) << attn_factor;
  const std::string log_mul = load_error(rewritten_model("log_mul", [](GgufWriter& w) {
    w.set("llama.rope.scaling.type", GgufValue::str("yarn"));
    w.set("llama.rope.scaling.factor", GgufValue::f32(4.0f));
    w.set("llama.rope.scaling.yarn_log_multiplier", GgufValue::f32(0.1f));
  }));
  EXPECT_NE(log_mul.find("yarn_log_multiplier"), std::string::npos) << log_mul;
}

// YaRN's parameters as llama.cpp derives them: with rope over 16 dims at base 10000 and 4096 trained
// positions, pair i turns 4096 / (2 pi 10000^(i/8)) times: more than 32 up to pair 2 (floor 2.6), at
// least once up to pair 5 (ceil 5.6 = 6); cos/sin scaled by 1 + 0.1 ln 4 (times the attn_factor 1.25).
TEST(ModelConfig, ReadsYarnScaling) {
  const std::string path = rewritten_model("yarn_ok", [](GgufWriter& w) {
    w.set("llama.rope.freq_base", GgufValue::f32(10000.0f));
    w.set("llama.rope.scaling.type", GgufValue::str("yarn"));
    w.set("llama.rope.scaling.factor", GgufValue::f32(4.0f));
    w.set("llama.rope.scaling.original_context_length", GgufValue::u32(4096));
    w.set("llama.rope.scaling.attn_factor", GgufValue::f32(1.25f));
  });
  const LlamaConfig c = LlamaConfig::from_gguf(*GgufFile::open(path));
  ASSERT_EQ(c.rope_dim, 16);
  EXPECT_FLOAT_EQ(c.rope_freq_scale, 0.25f);
  ASSERT_TRUE(c.rope_yarn.has_value());
  EXPECT_EQ(c.rope_yarn_orig_ctx, 4096);
  EXPECT_EQ(c.rope_yarn->corr_low, 2.0f);
  EXPECT_EQ(c.rope_yarn->corr_high, 6.0f);
  EXPECT_FLOAT_EQ(c.rope_yarn->mscale, 1.25f * (1.0f + 0.1f * std::log(4.0f)));
  EXPECT_EQ(c.differences().back(),
            "YaRN RoPE scaling: x4 over 4096 trained positions; pairs 2..6 blend original and interpolated angles; "
            "cos/sin x1.4233");
}

TEST(ModelConfig, ImpossibleHeadCountsNameTheKey) {
  const std::string path =
      rewritten_model("heads", [](GgufWriter& w) { w.set("llama.attention.head_count_kv", GgufValue::u32(3)); });
  const std::string error = load_error(path);
  EXPECT_NE(error.find("head_count_kv"), std::string::npos) << error;
}

}  // namespace
}  // namespace inferscope::test
