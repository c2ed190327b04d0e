// Model files the Llama loader must refuse, each with an error that names what is wrong.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include "core/gguf/gguf_file.h"
#include "core/gguf/gguf_writer.h"
#include "core/model/llama_model.h"
#include "tests/support/synthetic_model.h"

namespace inferscope::test {
namespace {

// A valid synthetic model rewritten with `change` applied to its writer; returns the new path.
std::string rewritten_model(const std::string& name, const std::function<void(GgufWriter&)>& change) {
  const std::string original = ::testing::TempDir() + "/" + name + ".orig.gguf";
  const std::string path = ::testing::TempDir() + "/" + name + ".gguf";
  write_synthetic_model(SyntheticModelSpec{}, original);
  {
    const auto file = GgufFile::open(original);
    GgufWriter writer;
    for (const auto& [key, value] : file->metadata()) writer.set(key, value);
    for (const GgufTensorInfo& t : file->tensors()) {
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
  EXPECT_NE(error.find("'mamba' is not supported"), std::string::npos) << error;
}

TEST(ModelConfig, RefusesRopeFrequencyFactors) {
  const std::string path = rewritten_model("rope_freqs", [](GgufWriter& w) {
    w.add_tensor_f32("rope_freqs.weight", {8}, std::vector<float>(8, 1.0f));
  });
  const std::string error = load_error(path);
  EXPECT_NE(error.find("rope_freqs.weight"), std::string::npos) << error;
}

TEST(ModelConfig, RefusesUnsupportedRopeScaling) {
  const std::string path =
      rewritten_model("yarn", [](GgufWriter& w) { w.set("llama.rope.scaling.type", GgufValue::str("yarn")); });
  const std::string error = load_error(path);
  EXPECT_NE(error.find("rope.scaling.type"), std::string::npos) << error;
  EXPECT_NE(error.find("yarn"), std::string::npos) << error;
}

TEST(ModelConfig, ImpossibleHeadCountsNameTheKey) {
  const std::string path =
      rewritten_model("heads", [](GgufWriter& w) { w.set("llama.attention.head_count_kv", GgufValue::u32(3)); });
  const std::string error = load_error(path);
  EXPECT_NE(error.find("head_count_kv"), std::string::npos) << error;
}

}  // namespace
}  // namespace inferscope::test
