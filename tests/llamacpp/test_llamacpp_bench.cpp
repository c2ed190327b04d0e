// `bench --compare-llama-bench` with the real llama-bench (scripts/llama-cpp.sh builds it): both
// engines measure the same file and tests, alternating, and the ratio is ours over theirs.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/llamacpp/not_built.h"
#include "tests/support/cli_runner.h"
#include "tests/support/test_models.h"

namespace inferscope::test {
namespace {

TEST(LlamaBenchCompare, BothEnginesMeasureTheSameTests) {
  ASSERT_STRNE(LLAMA_BENCH, "") << kLlamaCppNotBuilt;
  INFERSCOPE_REQUIRE_FILE(path, shared_model_path("stories260K.gguf"));
  const nlohmann::json rows = cli_json("bench --model " + path + " -p 32 -n 16 -r 2 --threads 2 -o json " +
                                       "--compare-llama-bench " + std::string(LLAMA_BENCH));
  ASSERT_EQ(rows.size(), 2u);
  for (const nlohmann::json& r : rows) {
    SCOPED_TRACE(r.dump());
    ASSERT_EQ(r.at("llama_cpp_samples_ts").size(), 2u);
    EXPECT_GT(r.at("llama_cpp_avg_ts").get<double>(), 0.0);
    EXPECT_DOUBLE_EQ(r.at("ratio").get<double>(), r.at("avg_ts").get<double>() / r.at("llama_cpp_avg_ts").get<double>());
  }
}

}  // namespace
}  // namespace inferscope::test
