// Speculative decoding from the command line on stories260K: generate prints the same tokens and
// the same logprob bits with and without --spec, with the spec_decode metrics in --json; serve-sim
// reports them for a workload; bad speculation options exit 2 with the reason.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/cli_runner.h"
#include "tests/support/synthetic_model.h"
#include "tests/support/test_models.h"

namespace inferscope {
namespace {

using test::CliRun;

using test::cli;
using test::cli_json;

TEST(SpecCli, GenerateGivesTheSameTokensAndLogprobBitsForEveryProposer) {
  INFERSCOPE_REQUIRE_FILE(path, test::shared_model_path("stories260K.gguf"));
  const std::string run = "generate --model " + path + " --prompt 'Once upon a time' -n 80 -t 2 --json --logprobs 3";
  const nlohmann::json plain = cli_json(run);
  for (const std::string& spec : std::vector<std::string>{"ngram --spec-k 6", "draft --draft-model " + path, "self-quant --draft-quant q8",
                                 "early-exit --draft-layers 3"}) {
    SCOPED_TRACE(spec);
    const nlohmann::json out = cli_json(run + " --spec " + spec);
    EXPECT_EQ(out["tokens"], plain["tokens"]);
    EXPECT_EQ(out["text"], plain["text"]);
    EXPECT_EQ(out["logprobs"].dump(), plain["logprobs"].dump());  // %.9g: the same bits
    const nlohmann::json& m = out["metrics"]["spec_decode"];
    EXPECT_GT(m["spec_decode_num_drafts"].get<int64_t>(), 0);
    EXPECT_LE(m["spec_decode_num_accepted_tokens"].get<int64_t>(), m["spec_decode_num_draft_tokens"].get<int64_t>());
    EXPECT_GE(m["mean_acceptance_length"].get<double>(), 1.0);
  }
}

TEST(SpecCli, ServeSimReportsAcceptance) {
  INFERSCOPE_REQUIRE_FILE(path, test::shared_model_path("stories260K.gguf"));
  const nlohmann::json out = cli_json("serve-sim --model " + path +
                                      " --generate-workload 6 --prompt-len 4:32 --output-len 16:48 --seed 3 -t 2 "
                                      "--json --spec draft --draft-model " + path);
  const nlohmann::json& s = out;
  EXPECT_EQ(s["requests_finished"], 6);
  EXPECT_EQ(s["spec_mode"], "draft");
  // The draft is the target itself: every draft token is accepted.
  EXPECT_GT(s["spec_decode"]["spec_decode_num_draft_tokens"].get<int64_t>(), 0);
  EXPECT_EQ(s["spec_decode"]["acceptance_rate"], 1.0);
}

TEST(SpecCli, BadSpeculationOptionsExitTwoWithTheReason) {
  INFERSCOPE_REQUIRE_FILE(path, test::shared_model_path("stories260K.gguf"));
  const std::string other = ::testing::TempDir() + "/spec-cli-other-vocab.gguf";
  test::write_synthetic_model(test::SyntheticModelSpec{}, other);
  const std::string gen = "generate --model " + path + " --prompt hi -n 4 ";
  for (const auto& [args, reason] : std::initializer_list<std::pair<std::string, std::string>>{
           {gen + "--spec ngram --spec-k 0", "--spec-k"},
           {gen + "--spec ngram --spec-k 17", "--spec-k"},
           {gen + "--spec early-exit --draft-layers 5", "draft-layers must be in 1..4"},
           {gen + "--spec early-exit", "needs --draft-layers"},
           {gen + "--spec draft", "needs --draft-model"},
           {gen + "--spec draft --draft-model " + other, "vocabulary differs from the target's at token id"},
           {gen + "--spec draft --draft-model /nonexistent.gguf", "/nonexistent.gguf"},
           {gen + "--spec self-quant --quant q4 --draft-quant q4", "no smaller than the target's weights"},
           {gen + "--spec self-quant --draft-quant f16", "--draft-quant: 'f16' is not one of q4, q4_1, q8"},
           {gen + "--spec ngram --ngram-min 5 --ngram-max 3", "above --ngram-max"},
           {gen + "--draft-layers 2", "needs --spec early-exit"},
           {gen + "--spec ngram --draft-p-min 1.5", "--draft-p-min"},
           {"serve-sim --model " + path + " --generate-workload 2 --prompt-len 4:8 --output-len 4:8 --dry-run --spec ngram",
            "dry run"},
       }) {
    SCOPED_TRACE(args);
    const CliRun r = cli(args);
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find(reason), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace inferscope
