// Our K-quant levels against llama-quantize on the same input: the demo model dequantized to f32, then
// saved at q4_k by us and at Q4_K_M by llama-quantize (q6_k and Q6_K likewise). Every tensor must get
// the same format (the per-tensor policy and its fallbacks), nearly every byte must agree (the writers
// follow ggml's reference quantizers; a rare 6-bit scale code differs by one where float rounding of
// the fit lands on the other side), and our file's perplexity must be within 2% of llama-quantize's,
// measured by our engine with llama-perplexity's procedure on the sample text.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>

#include "core/gguf/gguf_file.h"
#include "tests/llamacpp/not_built.h"
#include "tests/support/cli_runner.h"
#include "tests/support/test_models.h"

namespace inferscope::test {
namespace {

const std::string kSampleText = std::string(INFERSCOPE_SOURCE_DIR) + "/resources/text/perplexity-sample.txt";

struct LevelPair {
  std::string ours;    // our --quant level
  std::string theirs;  // llama-quantize's type
};

// One per process: ctest runs each level's test as its own process, possibly at the same time.
const std::string kDemoF32 = ::testing::TempDir() + "/demo-f32-" + std::to_string(::getpid()) + ".gguf";

// The f32 file (515 MB) goes when the tests end.
class RemoveDemoF32 : public ::testing::Environment {
  void TearDown() override { std::filesystem::remove(kDemoF32); }
};
[[maybe_unused]] const ::testing::Environment* const kRemoveDemoF32 =
    ::testing::AddGlobalTestEnvironment(new RemoveDemoF32);

// The demo model dequantized to f32 by `quantize` (once per test binary).
const std::string& demo_f32() {
  static const std::string path = [] {
    const std::string& out = kDemoF32;
    const CliRun r = cli("quantize --model " + demo_model_path() + " --quant f32 --out " + out + " --threads 2");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return out;
  }();
  return path;
}

double perplexity_of(const std::string& model) {
  const nlohmann::json j = cli_json("perplexity --model " + model + " --file " + kSampleText +
                                    " --ctx 256 --method llamacpp --threads 2 --json");
  return j.at("perplexity").get<double>();
}

class LlamaQuantizeParity : public ::testing::TestWithParam<LevelPair> {};

TEST_P(LlamaQuantizeParity, SameFormatsAndPerplexityWithinTwoPercent) {
  ASSERT_STRNE(LLAMA_QUANTIZE, "") << kLlamaCppNotBuilt;
  INFERSCOPE_REQUIRE_FILE(demo, demo_model_path());
  const LevelPair& p = GetParam();
  const std::string ours = ::testing::TempDir() + "/demo-ours-" + p.ours + ".gguf";
  const std::string theirs = ::testing::TempDir() + "/demo-llama-" + p.theirs + ".gguf";
  const CliRun r = cli("quantize --model " + demo_f32() + " --quant " + p.ours + " --out " + ours + " --threads 2");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string command =
      std::string(LLAMA_QUANTIZE) + " " + demo_f32() + " " + theirs + " " + p.theirs + " 2 >/dev/null 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;

  const auto a = GgufFile::open(ours), b = GgufFile::open(theirs);
  ASSERT_EQ(a->tensors().size(), b->tensors().size());
  int identical = 0;
  for (const GgufTensorInfo& t : a->tensors()) {
    const GgufTensorInfo& u = b->tensor(t.name);
    ASSERT_EQ(dtype_name(t.type), dtype_name(u.type)) << t.name;
    ASSERT_EQ(t.dims, u.dims) << t.name;
    ASSERT_EQ(t.n_bytes, u.n_bytes) << t.name;
    size_t differing = 0;
    for (size_t i = 0; i < t.n_bytes; ++i) differing += t.data[i] != u.data[i] ? 1 : 0;
    EXPECT_LE(differing, t.n_bytes / 1000) << t.name << ": " << differing << " of " << t.n_bytes << " bytes differ";
    identical += differing == 0 ? 1 : 0;
  }
  EXPECT_GE(identical, static_cast<int>(a->tensors().size()) * 9 / 10);

  const double ppl_ours = perplexity_of(ours), ppl_theirs = perplexity_of(theirs);
  RecordProperty("perplexity_ours", std::to_string(ppl_ours));
  RecordProperty("perplexity_llama_quantize", std::to_string(ppl_theirs));
  EXPECT_NEAR(ppl_ours / ppl_theirs, 1.0, 0.02) << "ours " << ppl_ours << ", llama-quantize's " << ppl_theirs;
  std::filesystem::remove(ours);
  std::filesystem::remove(theirs);
}

INSTANTIATE_TEST_SUITE_P(Levels, LlamaQuantizeParity,
                         ::testing::Values(LevelPair{"q4_k", "Q4_K_M"}, LevelPair{"q6_k", "Q6_K"}),
                         [](const ::testing::TestParamInfo<LevelPair>& param) { return param.param.ours; });

}  // namespace
}  // namespace inferscope::test
