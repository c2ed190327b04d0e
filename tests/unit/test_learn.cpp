// Guided experiments (core/learn): the expression language and narration formats against written-out
// answers, experiment files rejected with the file and field named, derived values in dependency
// order, and a real run whose narration carries exactly the numbers its metrics hold.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/workload/text_perplexity.h"
#include "core/learn/experiment.h"
#include "core/learn/experiment_report.h"
#include "core/learn/experiment_runner.h"
#include "core/learn/narration.h"
#include "core/model/llama_model.h"
#include "tests/support/test_models.h"

namespace inferscope {
namespace {

void expect_error(const std::function<void()>& fn, const std::string& fragment) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one containing \"" << fragment << "\"";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(LearnExpression, EvaluatesArithmeticComparisonsAndLogic) {
  const ValueMap v = {{"a.x", 6}, {"b.x", 1.5}, {"n", 4}};
  EXPECT_DOUBLE_EQ(evaluate("a.x / b.x", v), 4);
  EXPECT_DOUBLE_EQ(evaluate("2 * (a.x - n) + -1", v), 3);
  EXPECT_DOUBLE_EQ(evaluate("max(a.x, n) - min(b.x, 2)", v), 4.5);
  EXPECT_DOUBLE_EQ(evaluate("a.x / b.x == n", v), 1);
  EXPECT_DOUBLE_EQ(evaluate("a.x > 10 || n >= 4", v), 1);
  EXPECT_DOUBLE_EQ(evaluate("a.x > 1 && n < 4", v), 0);
  EXPECT_DOUBLE_EQ(evaluate("1e3 * b.x", v), 1500);
  EXPECT_DOUBLE_EQ(evaluate("pow(n, b.x * 2) - pow(2, -1)", v), 63.5);
  expect_error([&] { evaluate("pow(n)", v); }, "expected ',' in pow()");
  EXPECT_TRUE(std::isinf(evaluate("a.x / 0", v)));
  expect_error([&] { evaluate("a.x / missing.value", v); }, "no value named 'missing.value'");
  expect_error([&] { evaluate("(a.x + 1", v); }, "missing ')'");
  expect_error([&] { evaluate("a.x $ 2", v); }, "unexpected '$' at character 5");
}

TEST(LearnNarration, FillsPlaceholdersInTheirFormats) {
  const ValueMap v = {{"t", 0.01234}, {"f", 0.875}, {"b", 3 << 20}, {"n", 12}, {"r", 1.23456}};
  EXPECT_EQ(fill_narration("{n} requests in {t:ms}, {f:%} unused, {b:mib}, {r:.2f}×, {r}", v),
            "12 requests in 12.3 ms, 87.5% unused, 3.00 MiB, 1.23×, 1.23");
  EXPECT_EQ(fill_narration("{{literal}} {n * 2}", v), "{literal} 24");
  EXPECT_EQ(format_value(std::nan(""), ""), "n/a");
  EXPECT_EQ(fill_narration("{n > 3:yes}/{n > 30:yes}, {n:divergence}, {-1:divergence}", v), "yes/no, at token 12, nowhere (identical)");
  // A change is worded from its own value: never "rose" for a ratio under 1.
  EXPECT_EQ(fill_narration("{0.0000312:time}, {t:time}, {r:time}", v), "31 µs, 12.3 ms, 1.23 s");
  EXPECT_EQ(fill_narration("{r:change}, {0.804:change}, {1.001:change}", v),
            "rose to 1.23×, fell to 0.80×, stayed the same (1.00×)");
  expect_error([&] { fill_narration("{n:weird}", v); }, "unknown format 'weird'");
  expect_error([&] { fill_narration("{nope}", v); }, "placeholder {nope}");
  expect_error([&] { fill_narration("open {n", v); }, "'{' without '}'");
}

TEST(LearnValues, DerivedValuesMayUseEachOtherInAnyOrder) {
  ValueMap v = {{"x", 2}};
  add_derived_values(v, {{"c", "b * 10"}, {"b", "a + 1"}, {"a", "x * 3"}});
  EXPECT_DOUBLE_EQ(v["c"], 70);
  expect_error([&] { add_derived_values(v, {{"p", "q + 1"}, {"q", "p + 1"}}); }, "no value named");
}

nlohmann::json minimal_experiment() {
  return {{"title", "T"},
          {"runs", {{{"name", "one"}, {"config", {{"kv", "paged"}}},
                     {"workload", {{"requests", {{{"arrival_s", 0}, {"prompt_tokens", 8}, {"output_tokens", 4}}}}}}}}},
          {"narration", {"{one.decode_tokens} decode tokens"}}};
}

TEST(LearnExperiment, MalformedFilesNameTheFieldAndValue) {
  EXPECT_NO_THROW(Experiment::parse(minimal_experiment(), "x.json", ""));
  auto broken = [](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = minimal_experiment();
    edit(j);
    return j;
  };
  expect_error([&] { Experiment::parse(broken([](auto& j) { j.erase("title"); }), "x.json", ""); }, "x.json: field 'title'");
  expect_error([&] { Experiment::parse(broken([](auto& j) { j["runs"] = nlohmann::json::array(); }), "x.json", ""); },
               "'runs' must be a non-empty array");
  expect_error([&] { Experiment::parse(broken([](auto& j) { j["runs"][0]["config"]["kv"] = "tiled"; }), "x.json", ""); },
               "x.json: runs[0]: config: 'kv': \"tiled\" is not one of paged, contiguous");
  expect_error([&] { Experiment::parse(broken([](auto& j) { j["runs"][0]["config"]["kv_budget_tokens"] = "many"; }), "x.json", ""); },
               "field 'kv_budget_tokens'");
  expect_error([&] { Experiment::parse(broken([](auto& j) { j["runs"].push_back(j["runs"][0]); }), "x.json", ""); },
               "two runs are named \"one\"");
  expect_error([&] { Experiment::parse(broken([](auto& j) { j["plots"] = {{{"plot", "pie"}}}; }), "x.json", ""); },
               "plots[0]: unknown plot \"pie\"");
  expect_error([&] { Experiment::parse(broken([](auto& j) { j["plots"] = {{{"plot", "timeline"}, {"runs", {"two"}}}}; }), "x.json", ""); },
               "no run named \"two\"");
  expect_error([&] { Experiment::parse(broken([](auto& j) { j["runs"][0]["workload"] = "no/such/file.json"; }), "x.json", ""); },
               "no/such/file.json");
  expect_error([&] { Experiment::parse(broken([](auto& j) { j["colour"] = "red"; }), "x.json", ""); }, "unknown field 'colour'");
  expect_error([&] { Experiment::parse(broken([](auto& j) { j["perplexity"] = {{"text", "no/such/text.txt"}}; }), "x.json", ""); },
               "x.json: perplexity: cannot read the text no/such/text.txt");
  expect_error([&] { Experiment::parse(broken([](auto& j) { j["perplexity"] = {{"text", "README.md"}, {"ctx", 1}}; }), "x.json", ""); },
               "'ctx' must be at least 2, not 1");
  expect_error([&] { Experiment::parse(broken([](auto& j) { j["attention_sweep"] = {{"contexts", {64, 32}}}; }), "x.json", ""); },
               "x.json: attention_sweep: 'contexts' must be positive and ascending; 32 at index 1 is not");
  expect_error([&] { Experiment::parse(broken([](auto& j) { j["attention_sweep"] = {{"contexts", {64}}, {"repeats", 0}}; }), "x.json", ""); },
               "'repeats' must be at least 1, not 0");
  expect_error([&] { Experiment::parse(broken([](auto& j) { j["plots"] = {{{"plot", "attention_sweep"}}}; }), "x.json", ""); },
               "a plot \"attention_sweep\" needs the experiment's 'attention_sweep'");
  // Numbers an int cannot hold: nlohmann casts them regardless, undefined behaviour that fuzz_experiment's
  // UBSan caught (tests/fuzz/regressions/fuzz_experiment).
  expect_error([&] { Experiment::parse(broken([](auto& j) { j["attention_sweep"] = {{"contexts", {64, 1e300}}}; }), "x.json", ""); },
               "x.json: attention_sweep: field 'contexts' is missing or has the wrong type: [64,1e+300]");
  expect_error([&] { Experiment::parse(broken([](auto& j) { j["runs"][0]["config"]["threads"] = 1e10; }), "x.json", ""); },
               "x.json: runs[0]: config: 'threads': 10000000000.0 is not an integer");
  expect_error([&] { Experiment::parse(broken([](auto& j) { j["runs"][0]["config"]["block_size"] = 16.5; }), "x.json", ""); },
               "x.json: runs[0]: config: 'block_size': 16.5 is not one of 8, 16, 32");
  expect_error([&] { Experiment::parse_text("{\"title\": 1e999}", "x.json", ""); }, "x.json: not valid JSON: ");
}

AttentionBenchRow sweep_row(const char* impl, int32_t context, double seconds, size_t scratch) {
  AttentionBenchRow r;
  r.implementation = impl;
  r.phase = "prefill";
  r.context = context;
  r.seconds_mean = seconds;
  r.scratch_bytes = scratch;
  return r;
}

// The crossover is the shortest context from which flash stays faster: a faster point below a slower
// one does not count, and a slower longest point means there is none.
TEST(LearnValues, AttentionSweepCrossover) {
  ValueMap v;
  add_sweep_values(v, {sweep_row("naive", 64, 1.0, 100), sweep_row("flash", 64, 2.0, 50),
                       sweep_row("naive", 128, 3.0, 400), sweep_row("flash", 128, 2.5, 50),
                       sweep_row("naive", 256, 9.0, 1600), sweep_row("flash", 256, 3.0, 50)});
  EXPECT_EQ(v.at("sweep.prefill.crossover"), 128);
  EXPECT_EQ(v.at("sweep.prefill.speedup.256"), 3.0);
  EXPECT_EQ(v.at("sweep.prefill.naive.scratch_bytes.256"), 1600);
  EXPECT_EQ(v.at("sweep.prefill.flash.seconds.64"), 2.0);
  EXPECT_EQ(v.at("sweep.shortest"), 64);
  EXPECT_EQ(v.at("sweep.longest"), 256);
  ValueMap dip;
  add_sweep_values(dip, {sweep_row("naive", 64, 3.0, 1), sweep_row("flash", 64, 2.0, 1),
                         sweep_row("naive", 128, 1.0, 1), sweep_row("flash", 128, 2.0, 1),
                         sweep_row("naive", 256, 9.0, 1), sweep_row("flash", 256, 3.0, 1)});
  EXPECT_EQ(dip.at("sweep.prefill.crossover"), 256);
  ValueMap never;
  add_sweep_values(never, {sweep_row("naive", 64, 1.0, 1), sweep_row("flash", 64, 2.0, 1)});
  EXPECT_EQ(never.at("sweep.prefill.crossover"), -1);
}

// Every shipped experiment parses, and its workloads load from the source tree.
TEST(LearnExperiment, ShippedExperimentsParse) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(test::source_path("resources/experiments"))) {
    const Experiment e = Experiment::load(entry.path().string());
    EXPECT_FALSE(e.title.empty()) << entry.path();
    EXPECT_FALSE(e.narration.empty()) << entry.path();
    EXPECT_FALSE(e.conclusions.empty()) << entry.path();
    ++count;
  }
  EXPECT_GE(count, 5);
}

// The KV-cache experiment on stories260K: the narration's numbers are the run's own metrics, and
// the formula it shows matches the cache's bytes per token.
TEST(LearnExperiment, KvCacheNarrationCarriesTheMeasuredNumbers) {
  INFERSCOPE_REQUIRE_FILE(path, test::shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  const Experiment e = Experiment::load(test::source_path("resources/experiments/2-kv-cache.json"));
  const ExperimentResult r = run_experiment(e, *model, EngineConfig{});
  ASSERT_EQ(r.runs.size(), 1u);
  const MeasuredRun& run = r.runs[0];
  const LlamaConfig& c = model->config();
  const size_t formula = size_t{2} * c.n_layers * c.n_kv_heads * c.head_dim * 2;
  EXPECT_EQ(run.kv_bytes_per_token, formula);
  // 200 prompt tokens + 57 outputs hold 256 slots in the last step, which also finishes the request
  // and frees them: between steps the cache is seen at most at 255.
  EXPECT_EQ(run.peak_kv.filled_tokens, 255u);
  EXPECT_DOUBLE_EQ(r.values.at("one.peak_filled_tokens"), 255);
  EXPECT_DOUBLE_EQ(r.values.at("one.decode_tokens"), static_cast<double>(run.result.summary.decode_tokens));
  ASSERT_EQ(r.narration.size(), e.narration.size());
  EXPECT_NE(r.narration[0].find("= " + std::to_string(formula) + " bytes. The cache reports " + std::to_string(formula)),
            std::string::npos) << r.narration[0];
  EXPECT_NE(r.narration[1].find("held 255 tokens"), std::string::npos) << r.narration[1];
  EXPECT_NE(r.conclusion.find("agree to the byte"), std::string::npos) << r.conclusion;
  // The peak block table is the one request's: 256 tokens in blocks of 16.
  ASSERT_EQ(run.peak_blocks.sequences.size(), 1u);
  EXPECT_EQ(run.peak_blocks.sequences[0].block_table.size(), 16u);
  const std::string md = experiment_markdown(e, r, c.name, {{"block tables", "blocks.png"}});
  EXPECT_NE(md.find("# The KV cache"), std::string::npos);
  EXPECT_NE(md.find(r.conclusion), std::string::npos);
  EXPECT_NE(md.find("![block tables](blocks.png)"), std::string::npos);
}

// The quantization experiment's perplexity on stories260K: every run's value is the text's perplexity
// at that run's level, as inferscope-cli perplexity measures it.
TEST(LearnExperiment, PerplexityPerRunIsTheTextScoredAtItsLevel) {
  INFERSCOPE_REQUIRE_FILE(path, test::shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  const Experiment e = Experiment::load(test::source_path("resources/experiments/6-quantization.json"));
  ASSERT_TRUE(e.perplexity.has_value());
  const ExperimentResult r = run_experiment(e, *model, EngineConfig{});
  const std::vector<TokenId> tokens = model->tokenizer().encode(e.perplexity->text, true, false);
  for (const char* level : {"f32", "q4"}) {
    EngineConfig config;
    config.quant = parse_weight_quant(level);
    const double expected = measure_text_perplexity(*model, config, tokens, e.perplexity->ctx).level.perplexity;
    EXPECT_EQ(r.values.at(std::string(level) + ".perplexity"), expected) << level;
    EXPECT_GT(expected, 1.0);
  }
  EXPECT_NE(r.values.at("q4.perplexity"), r.values.at("f32.perplexity"));
}

// The flash-vs-naive experiment keeps each run's logits: the largest difference is over rows both
// runs computed from the same inputs, and a run against itself differs by nothing.
TEST(LearnExperiment, LogitDifferenceComparesRowsWithTheSameInputs) {
  INFERSCOPE_REQUIRE_FILE(path, test::shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  const Experiment e = Experiment::load(test::source_path("resources/experiments/5-flash-vs-naive.json"));
  const ExperimentResult r = run_experiment(e, *model, EngineConfig{});
  const size_t vocab = static_cast<size_t>(model->config().vocab_size);
  for (const MeasuredRun& run : r.runs) {
    for (const WorkloadOutput& out : run.result.outputs) {
      // Greedy: each kept row's argmax is the token it chose.
      ASSERT_EQ(out.logits.size(), out.tokens.size() * vocab) << run.name;
      for (size_t i = 0; i < out.tokens.size(); ++i) {
        const auto row = out.logits.begin() + static_cast<ptrdiff_t>(i * vocab);
        EXPECT_EQ(std::max_element(row, row + static_cast<ptrdiff_t>(vocab)) - row, out.tokens[i]) << run.name << " " << i;
      }
      EXPECT_EQ(max_logit_difference(out, out, vocab), 0.0);
    }
  }
  const double diff = r.values.at("max_logit_diff.flash_448.naive_448");
  // Another summation order moves the last bits: f32 rounding (2^-24 relative per addition) through
  // the model's 5 layers stays orders of magnitude below 1e-3 on logits of magnitude about 10.
  EXPECT_GT(diff, 0.0);
  EXPECT_LT(diff, 1e-3);
  // The sweep's values are its rows.
  ASSERT_FALSE(r.attention_sweep.empty());
  for (const AttentionBenchRow& row : r.attention_sweep) {
    EXPECT_EQ(r.values.at("sweep." + row.phase + "." + row.implementation + ".seconds." + std::to_string(row.context)),
              row.seconds_mean);
  }
}

}  // namespace
}  // namespace inferscope
