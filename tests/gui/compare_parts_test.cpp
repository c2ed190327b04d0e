// The comparison's parts, checked on constructed cases: where two token lists part, the verdict and
// the marked token in the outputs view, which settings A and B differ in and the warning when several
// do, the delta table's values and signs, which metrics are coloured better or worse (only those with
// a direction, and only beyond the spread of each side's runs), a synthetic prompt's outputs shown
// without their text, the config panel's weights line while a conversion runs, and demo-script "compare"
// steps refused by field. With a server side: figures it does not report marked so (not 0), texts
// compared by character, outputs never promised to match, each side's source exported. With a simulated
// side: no output compared or shown as text, what a dry run does not measure marked so, its device
// exported; device files read with a bad one reported, not thrown.
#include <QFile>
#include <QTableWidget>
#include <QTimer>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "core/model/llama_model.h"
#include "gui/app/demo_script.h"
#include "gui/compare/compare_render.h"
#include "gui/compare/comparison.h"
#include "gui/compare/config_difference.h"
#include "gui/compare/simulated_side.h"
#include "gui/config/config_panel.h"
#include "gui/dashboard/not_reported.h"
#include "tests/gui/workbench_fixture.h"

namespace inferscope::gui::test {
namespace {

WorkloadOutput output(RequestId id, std::vector<TokenId> tokens) {
  WorkloadOutput out;
  out.id = id;
  out.tokens = std::move(tokens);
  out.finish_reason = "length";
  return out;
}

// Two runs' figures: B decodes slower (80 against 100 tok/s) with a lower TTFT (0.1 against 0.2 s)
// on half the weight bytes, and leaves `b_unused` of its reservations unused where A left none.
void fill_runs(WorkloadResult& a, WorkloadResult& b, double b_unused) {
  a.summary.tokens_per_second = 100;
  b.summary.tokens_per_second = 80;
  a.summary.time_to_first_token_seconds_p50 = 0.2;
  b.summary.time_to_first_token_seconds_p50 = 0.1;
  a.summary.kv_reserved_unused_perc_mean = 0;
  b.summary.kv_reserved_unused_perc_mean = b_unused;
  a.summary.weight_bytes = 1 << 20;
  b.summary.weight_bytes = 1 << 19;
}

// A comparison of `runs` runs per side, every run of a side giving the same figures (no spread).
Comparison repeated(const WorkloadResult& a, const WorkloadResult& b, int runs = 3) {
  Comparison c;
  c.a = a;
  c.b = b;
  c.reruns_a.assign(static_cast<size_t>(runs - 1), a);
  c.reruns_b.assign(static_cast<size_t>(runs - 1), b);
  return c;
}

// Side `a`'s and `b`'s runs at these throughputs, everything else equal.
Comparison throughputs(std::vector<double> a, std::vector<double> b) {
  Comparison c;
  for (auto [values, first, reruns] : {std::tuple{&a, &c.a, &c.reruns_a}, std::tuple{&b, &c.b, &c.reruns_b}}) {
    for (size_t i = 0; i < values->size(); ++i) {
      WorkloadResult run;
      run.summary.tokens_per_second = (*values)[i];
      if (i == 0) *first = run;
      else reruns->push_back(run);
    }
  }
  return c;
}

TEST(CompareParts, FirstDivergenceFindsWhereTokenListsPart) {
  const std::vector<TokenId> abc = {5, 6, 7}, abd = {5, 6, 9}, ab = {5, 6}, none = {};
  EXPECT_EQ(first_divergence(abc, abc), -1);
  EXPECT_EQ(first_divergence(none, none), -1);
  EXPECT_EQ(first_divergence(abc, abd), 2);
  EXPECT_EQ(first_divergence(abc, ab), 2);  // one ended early: they part where it stopped
  EXPECT_EQ(first_divergence(ab, abc), 2);
  EXPECT_EQ(first_divergence(none, abc), 0);
  EXPECT_EQ(divergence_text(-1), "identical");
  EXPECT_EQ(divergence_text(2), "diverges at token 2");
}

TEST(CompareParts, PairedOutputsMarkTheFirstDivergentToken) {
  INFERSCOPE_REQUIRE_FILE(path, ::inferscope::test::shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  const Tokenizer& tok = model->tokenizer();
  const std::vector<TokenId> ids = tok.encode("Once upon a time there was a cat", false);
  ASSERT_GE(ids.size(), 5u);
  std::vector<TokenId> changed = ids;
  changed[3] = ids[4];  // parts at token 3

  WorkloadResult a, b;
  a.outputs = {output(0, ids), output(1, ids)};
  b.outputs = {output(0, ids), output(1, changed)};
  const std::vector<OutputPair> pairs = pair_outputs(model.get(), a, b);
  ASSERT_EQ(pairs.size(), 2u);

  EXPECT_EQ(pairs[0].divergence, -1);
  EXPECT_EQ(pairs[0].a.common, pairs[0].b.common);
  EXPECT_EQ(pairs[0].a.marked, "");
  EXPECT_EQ(pairs[0].a.tokens, static_cast<int32_t>(ids.size()));

  const OutputPair& p = pairs[1];
  EXPECT_EQ(p.divergence, 3);
  std::string first3;
  for (int i = 0; i < 3; ++i) first3 += tok.token_to_piece(ids[static_cast<size_t>(i)]);
  EXPECT_EQ(p.a.common, first3);
  EXPECT_EQ(p.b.common, first3);
  EXPECT_EQ(p.a.marked, tok.token_to_piece(ids[3]));
  EXPECT_EQ(p.b.marked, tok.token_to_piece(changed[3]));
  EXPECT_EQ(p.a.common + p.a.marked + p.a.after, [&] {
    std::string all;
    for (TokenId t : ids) all += tok.token_to_piece(t);
    return all;
  }());

  // The view names each verdict and highlights exactly one token per diverging side.
  const QString html = outputs_html(pairs);
  EXPECT_TRUE(html.contains("request 0")) << html.toStdString();
  EXPECT_TRUE(html.contains("identical"));
  EXPECT_TRUE(html.contains("diverges at token 3"));
  EXPECT_EQ(html.count("background:#fde68a"), 2);

  // A synthetic prompt's continuation is no answer: its verdict and lengths show, its text does not.
  std::vector<OutputPair> synthetic = pairs;
  synthetic[1].synthetic_prompt = true;
  const QString hidden = outputs_html(synthetic);
  EXPECT_TRUE(hidden.contains("diverges at token 3"));
  EXPECT_TRUE(hidden.contains("synthetic prompt: pseudo-random token ids")) << hidden.toStdString();
  EXPECT_EQ(hidden.count("background:#fde68a"), 0) << "no text, so no marked token";
  EXPECT_EQ(hidden.count(QString::fromStdString(first3).toHtmlEscaped()), 2) << "request 0's text stays, twice";

  // A request that B never ran pairs with an empty side, diverging at 0.
  WorkloadResult b_short;
  b_short.outputs = {output(0, ids)};
  EXPECT_EQ(pair_outputs(model.get(), a, b_short)[1].divergence, 0);
}

TEST(CompareParts, DifferingSettingsNameEveryChangeASideReads) {
  const EngineConfig a;  // paged
  EXPECT_TRUE(differing_settings(a, a).empty());
  EXPECT_EQ(attribution_note({}),
            "A and B are identical: differences between the runs are run-to-run noise (timing), not a setting's effect");

  // One setting: no warning.
  EngineConfig b = a;
  b.kv.kind = KvKind::Contiguous;
  EXPECT_EQ(differing_settings(a, b), std::vector<std::string>{"KV"});
  EXPECT_EQ(attribution_note(differing_settings(a, b)), "");
  // A contiguous cache reads neither block size nor prefix cache: changing them changes nothing.
  b.kv.block_size = a.kv.block_size * 2;
  b.kv.prefix_cache = !a.kv.prefix_cache;
  EXPECT_EQ(differing_settings(a, b), std::vector<std::string>{"KV"});
  b.kv.kind = KvKind::Paged;
  EXPECT_EQ(differing_settings(a, b), (std::vector<std::string>{"block size", "prefix cache"}));

  // Speculation's fields count once a side speculates.
  EngineConfig s = a;
  s.spec.k = a.spec.k + 3;
  EXPECT_TRUE(differing_settings(a, s).empty());
  s.spec.mode = SpecMode::Ngram;
  EXPECT_EQ(differing_settings(a, s), std::vector<std::string>{"speculation"});

  // Operator fusion is a setting of its own.
  EngineConfig f = a;
  f.forward.matmul.fuse = !a.forward.matmul.fuse;
  EXPECT_EQ(differing_settings(a, f), std::vector<std::string>{"operator fusion"});

  // Three, in the config panel's order, whichever order they were changed in.
  EngineConfig c = a;
  c.quant = WeightQuant::Q8;
  c.attention = "naive";
  c.kv.kind = KvKind::Contiguous;
  EXPECT_EQ(differing_settings(a, c), (std::vector<std::string>{"KV", "attention", "weights"}));
  const std::string warning =
      "A and B differ in 3 settings (KV, attention, weights): differences cannot be attributed to one of them";
  EXPECT_EQ(attribution_note(differing_settings(a, c)), warning);

  // The export carries the settings and the warning; null when one setting differs.
  Comparison comparison;
  comparison.a.config = a;
  comparison.b.config = c;
  nlohmann::json j = comparison_json(comparison);
  EXPECT_EQ(j["differing_settings"], nlohmann::json({"KV", "attention", "weights"}));
  EXPECT_EQ(j["attribution_note"], warning);
  comparison.b.config = b;
  comparison.b.config.kv.block_size = a.kv.block_size;
  j = comparison_json(comparison);
  EXPECT_EQ(j["differing_settings"], nlohmann::json({"prefix cache"}));
  EXPECT_TRUE(j["attribution_note"].is_null()) << j["attribution_note"];

  // The view's rich text: the warning marked, nothing for one setting, the note in grey.
  EXPECT_TRUE(attribution_html(a, c).contains(QString::fromStdString(warning))) << attribution_html(a, c).toStdString();
  EXPECT_TRUE(attribution_html(a, comparison.b.config).isEmpty());
  EXPECT_TRUE(attribution_html(a, a).contains("A and B are identical"));
}

TEST(CompareParts, DeltaTableShowsBothRunsAndTheChange) {
  WorkloadResult a, b;
  fill_runs(a, b, 0.5);
  const std::vector<Delta> deltas = comparison_deltas(repeated(a, b));
  ASSERT_EQ(deltas.size(), 14u);
  EXPECT_EQ(deltas[0].metric, "throughput");
  EXPECT_DOUBLE_EQ(relative_change(deltas[0].a, deltas[0].b), -0.2);
  EXPECT_TRUE(std::isnan(relative_change(0, 0.5)));
  EXPECT_EQ(format_change(deltas[0]), "−20.0 %");

  test_app();
  QTableWidget table;
  fill_delta_table(table, deltas);
  ASSERT_EQ(table.rowCount(), 11);
  EXPECT_EQ(table.item(0, 1)->text(), "100 tok/s");
  EXPECT_EQ(table.item(0, 3)->text(), "−20.0 tok/s");
  // Lower throughput is worse (red); a lower TTFT is better (green).
  EXPECT_EQ(table.item(0, 4)->foreground().color(), QColor("#b91c1c"));
  EXPECT_EQ(table.item(1, 4)->text(), "−50.0 %");
  EXPECT_EQ(table.item(1, 4)->foreground().color(), QColor("#047857"));
  EXPECT_EQ(table.item(7, 4)->text(), "—");  // reserved-unused from 0: no relative change
  EXPECT_EQ(table.item(10, 2)->text(), "512 KiB");
  // A narrow table elides a metric's name: its tooltip always has it.
  for (int row = 0; row < table.rowCount(); ++row)
    EXPECT_TRUE(table.item(row, 0)->toolTip().contains(table.item(row, 0)->text())) << row;

  // Runs that did not measure weight bytes leave that row out.
  a.summary.weight_bytes = b.summary.weight_bytes = 0;
  fill_delta_table(table, comparison_deltas(a, b));
  EXPECT_EQ(table.rowCount(), 10);

  // The acceptance rows appear once a run speculated: B accepted 20 of 40 draft tokens in 10 drafts.
  b.summary.spec.num_drafts = 10;
  b.summary.spec.num_draft_tokens = 40;
  b.summary.spec.num_accepted_tokens = 20;
  fill_delta_table(table, comparison_deltas(a, b));
  ASSERT_EQ(table.rowCount(), 12);
  EXPECT_EQ(table.item(10, 0)->text(), "acceptance rate");
  EXPECT_EQ(table.item(10, 2)->text(), "50.0 %");
  EXPECT_EQ(table.item(11, 0)->text(), "mean acceptance length");
  EXPECT_EQ(table.item(11, 1)->text(), "1");  // no drafts: one token per pass
  EXPECT_EQ(table.item(11, 2)->text(), "3");
}

TEST(CompareParts, OnlyMetricsWithADirectionAreCalledBetterOrWorse) {
  WorkloadResult a, b;
  // Paged A against contiguous B: A fragments a little, B reserves and wastes most of its regions.
  fill_runs(a, b, 0.97);
  a.summary.kv_internal_fragmentation_perc_mean = 0.3;
  b.summary.kv_internal_fragmentation_perc_mean = 0;
  a.summary.e2e_request_latency_seconds_p50 = b.summary.e2e_request_latency_seconds_p50 = 1.5;
  a.summary.kv_cache_usage_perc_mean = 0.05;
  b.summary.kv_cache_usage_perc_mean = 0.9;
  a.summary.num_preemptions = 0;
  b.summary.num_preemptions = 2;
  a.summary.attention_scratch_bytes_peak = 4096;
  b.summary.attention_scratch_bytes_peak = 1024;
  std::map<std::string, DeltaVerdict> verdicts;
  std::map<std::string, Delta> by_metric;
  for (const Delta& d : comparison_deltas(repeated(a, b))) {
    verdicts[d.metric] = delta_verdict(d);
    by_metric[d.metric] = d;
    // A direction or a reason, never both or neither.
    EXPECT_EQ(d.better == Better::Neither, !d.neutral_reason.empty()) << d.metric;
  }
  EXPECT_EQ(verdicts["throughput"], DeltaVerdict::Worse);
  EXPECT_EQ(verdicts["TTFT p50"], DeltaVerdict::Better);
  EXPECT_EQ(verdicts["e2e latency p50"], DeltaVerdict::Unchanged);
  EXPECT_EQ(verdicts["preemptions"], DeltaVerdict::Worse);
  // 0 % fragmentation next to 97 % reserved-unused is not "better", and neither is the other way round.
  EXPECT_EQ(verdicts["fragmentation mean"], DeltaVerdict::Neutral);
  EXPECT_EQ(verdicts["reserved-unused mean"], DeltaVerdict::Neutral);
  EXPECT_EQ(verdicts["KV usage mean"], DeltaVerdict::Neutral);
  EXPECT_EQ(verdicts["weight bytes"], DeltaVerdict::Neutral);
  EXPECT_EQ(verdicts["acceptance rate"], DeltaVerdict::Unchanged);  // neither speculated: both 0
  // The peak over the run's steps, less is better.
  EXPECT_DOUBLE_EQ(by_metric["attention scratch peak"].a, 4096);
  EXPECT_TRUE(by_metric["attention scratch peak"].available);
  EXPECT_EQ(verdicts["attention scratch peak"], DeltaVerdict::Better);
  EXPECT_NE(by_metric["fragmentation mean"].neutral_reason.find("contiguous cache reports 0 % fragmentation"),
            std::string::npos);

  // The table colours the two with a direction and leaves the others plain, saying why on hover.
  test_app();
  QTableWidget table;
  const std::vector<Delta> deltas = comparison_deltas(repeated(a, b));
  fill_delta_table(table, deltas);
  for (int row = 0; row < table.rowCount(); ++row) {
    const std::string metric = table.item(row, 0)->text().toStdString();
    const DeltaVerdict v = verdicts.at(metric);
    const bool coloured = table.item(row, 4)->data(Qt::ForegroundRole).isValid();
    EXPECT_EQ(coloured, v == DeltaVerdict::Better || v == DeltaVerdict::Worse) << metric;
    if (v == DeltaVerdict::Better) {
      EXPECT_EQ(table.item(row, 4)->foreground().color(), QColor("#047857")) << metric;
    }
    if (v == DeltaVerdict::Worse) {
      EXPECT_EQ(table.item(row, 4)->foreground().color(), QColor("#b91c1c")) << metric;
    }
    EXPECT_EQ(table.item(row, 4)->toolTip().toStdString(), by_metric.at(metric).neutral_reason) << metric;
  }

  // The export says the same: a direction or null, the verdict, and the reason where not coloured.
  const Comparison comparison = repeated(a, b);
  const nlohmann::json j = comparison_json(comparison);
  std::map<std::string, nlohmann::json> exported;
  for (const nlohmann::json& d : j["deltas"]) exported[d["metric"]] = d;
  EXPECT_EQ(exported["throughput"]["better"], "higher");
  EXPECT_EQ(exported["throughput"]["verdict"], "worse");
  EXPECT_EQ(exported["TTFT p50"]["better"], "lower");
  EXPECT_TRUE(exported["fragmentation mean"]["better"].is_null());
  EXPECT_EQ(exported["fragmentation mean"]["verdict"], "neutral");
  EXPECT_EQ(exported["fragmentation mean"]["not_coloured_because"], by_metric["fragmentation mean"].neutral_reason);
  EXPECT_FALSE(exported["throughput"].contains("not_coloured_because"));
}

TEST(CompareParts, AChangeIsColouredOnlyBeyondTheRunToRunSpread) {
  test_app();
  QTableWidget table;
  const auto throughput = [](const Comparison& c) { return comparison_deltas(c).front(); };
  // B's median is 1 % up, but its runs lie inside A's: noise, not a change.
  const Delta noise = throughput(throughputs({100, 104, 96}, {103, 99, 101}));
  EXPECT_DOUBLE_EQ(noise.a, 100);
  EXPECT_DOUBLE_EQ(noise.b, 101);
  EXPECT_EQ(noise.spread_a.runs, 3);
  EXPECT_DOUBLE_EQ(noise.spread_a.lo, 96);
  EXPECT_DOUBLE_EQ(noise.spread_a.hi, 104);
  EXPECT_EQ(delta_verdict(noise), DeltaVerdict::WithinSpread);
  fill_delta_table(table, {noise});
  EXPECT_FALSE(table.item(0, 4)->data(Qt::ForegroundRole).isValid()) << "noise must stay plain";
  EXPECT_EQ(table.item(0, 4)->toolTip(), "Not coloured: A's 3 runs gave 96.0 tok/s to 104 tok/s, B's 3 runs gave 99.0 "
                                         "tok/s to 103 tok/s; the ranges overlap, so the change is within the "
                                         "run-to-run spread.");
  // Every run of B beyond every run of A: better, green; the median of an even count is the middle pair's mean.
  const Delta faster = throughput(throughputs({100, 104, 96, 98}, {110, 112}));
  EXPECT_DOUBLE_EQ(faster.a, 99);
  EXPECT_DOUBLE_EQ(faster.b, 111);
  EXPECT_EQ(delta_verdict(faster), DeltaVerdict::Better);
  fill_delta_table(table, {faster});
  EXPECT_EQ(table.item(0, 4)->foreground().color(), QColor("#047857"));
  // One run per side measures no spread: even 20 % is not coloured, and the tooltip says how to measure it.
  const Delta once = throughput(throughputs({100}, {80}));
  EXPECT_EQ(delta_verdict(once), DeltaVerdict::WithinSpread);
  fill_delta_table(table, {once});
  EXPECT_FALSE(table.item(0, 4)->data(Qt::ForegroundRole).isValid());
  EXPECT_TRUE(table.item(0, 4)->toolTip().contains("one run per side measures no run-to-run spread"));
  // A dry run's figures are the same every run: two simulated runs of one each are compared exactly.
  Comparison simulated = throughputs({100}, {80});
  simulated.a.simulated_on = simulated.b.simulated_on = "H200";
  EXPECT_EQ(delta_verdict(throughput(simulated)), DeltaVerdict::Worse);

  // The export gives each side's runs and the verdict.
  const nlohmann::json j = comparison_json(throughputs({100, 104, 96}, {103, 99, 101}));
  EXPECT_EQ(j["runs_per_side"], nlohmann::json::array({3, 3}));
  const nlohmann::json& row = j["deltas"][0];
  EXPECT_EQ(row["verdict"], "within_spread");
  EXPECT_EQ(row["a_runs"]["runs"], 3);
  EXPECT_DOUBLE_EQ(row["a_runs"]["min"].get<double>(), 96);
  EXPECT_DOUBLE_EQ(row["b_runs"]["max"].get<double>(), 103);
}

TEST(CompareParts, ConfigPanelShowsTheWeightsAndAConversionInProgress) {
  test_app();
  ConfigPanel panel;
  EngineMetricsSnapshot m;
  m.weights_quant = "native";
  m.weight_bytes = size_t{92} << 20;
  panel.show_weights(m);
  EXPECT_FALSE(panel.converting());
  EXPECT_EQ(panel.weights_text(), "weights in use: native · 92.0 MiB");
  m.converting_to = "q8";
  m.conversion_progress = 0.4;
  panel.show_weights(m);
  EXPECT_TRUE(panel.converting());
  EXPECT_TRUE(panel.weights_text().contains("converting to q8: 40%")) << panel.weights_text().toStdString();
  panel.resize(420, 1100);
  EXPECT_GT(distinct_colors(render(panel, "config_panel_converting")), 10);
  m.converting_to.clear();
  m.weights_quant = "q8";
  panel.show_weights(m);
  EXPECT_FALSE(panel.converting());
  EXPECT_TRUE(panel.weights_text().startsWith("weights in use: q8")) << panel.weights_text().toStdString();
}

// What applying the toggles did is shown for a while, then goes: it never stays to describe a later state.
TEST(CompareParts, ConfigPanelResultGoesAfterAWhile) {
  test_app();
  ConfigPanel panel;
  panel.show_result(true, "applied: KV contiguous");
  EXPECT_EQ(panel.result_text(), "applied: KV contiguous");
  QTimer* timer = panel.findChild<QTimer*>("result_timer");
  ASSERT_NE(timer, nullptr);
  EXPECT_TRUE(timer->isActive());
  EXPECT_EQ(timer->interval(), ConfigPanel::kResultSeconds * 1000);
  timer->start(1);  // the same timeout, sooner
  EXPECT_TRUE(wait_for([&] { return panel.result_text().isEmpty(); }));
  panel.show_note("speculation needs a draft model");
  EXPECT_TRUE(timer->isActive());
  panel.clear_result();
  EXPECT_TRUE(panel.result_text().isEmpty());
  EXPECT_FALSE(timer->isActive());
}

TEST(CompareParts, QuantizationAndKvDtypeAreChoices) {
  test_app();
  ConfigPanel panel;
  EngineConfig c;
  c.quant = WeightQuant::Q4_1;
  c.kv_dtype = DType::Q8_0;
  panel.set_config(c);
  const EngineConfig read = panel.config();
  EXPECT_EQ(read.quant, WeightQuant::Q4_1);
  EXPECT_EQ(read.kv_dtype, DType::Q8_0);
}

TEST(CompareParts, DemoCompareStepsAreCheckedBeforeRunning) {
  QTemporaryDir dir;
  auto w = open_window(dir.path());
  auto refused = [&](const nlohmann::json& step) -> std::string {
    try {
      DemoScript demo(*w, nlohmann::json{{"steps", {step}}}, "demo.json", dir.filePath("out.png"));
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(refused({{"compare", {{"a", {{"quant", "q3"}}}}}}),
            "demo.json: steps[0]: compare.a: config: 'quant': \"q3\" is not one of native, f32, f16, q8, q4, q4_1, q4_k, q6_k");
  EXPECT_EQ(refused({{"compare", {{"speed", 1}}}}), "demo.json: steps[0]: compare: unknown field 'speed'");
  EXPECT_EQ(refused({{"compare", {{"workload", 3}}}}),
            "demo.json: steps[0]: compare: field 'workload' is missing or has the wrong type: 3");
  EXPECT_EQ(refused({{"compare", {{"a", {{"kv_dtype", "q8"}}}, {"b", {{"quant", "q4"}}}, {"workload", "chat"}}}}), "");
  EXPECT_EQ(refused({{"compare", {{"simulated", {{"c", "h200.json"}}}}}}), "demo.json: steps[0]: compare.simulated: unknown side 'c'");
  EXPECT_EQ(refused({{"compare", {{"simulated", {{"b", "h200.json"}}}}}}), "");
}

// A run as workload_result_of makes it for a llama-server: texts without token ids, 3 tokens each,
// and no KV, preemption, prefix-cache, attention or speculative figures.
WorkloadResult server_run(std::vector<std::string> texts) {
  WorkloadResult r;
  r.metrics.source = "llama.cpp at http://127.0.0.1:8080 (tiny)";
  r.metrics.not_reported = {"tokens_per_step", "attention_scratch_bytes", "attention_seconds", "matmul_seconds", "roofline",
                            "kv_internal_fragmentation_perc", "kv_reserved_unused_perc", "kv_cache_usage_perc",
                            "prefix_cache_hit_rate", "preemptions", "spec_acceptance", "spec_decode"};
  for (size_t i = 0; i < texts.size(); ++i) {
    WorkloadOutput out;
    out.id = static_cast<RequestId>(i);
    out.text = texts[i];
    out.finish_reason = "length";
    r.outputs.push_back(out);
    RequestMetrics m;
    m.id = out.id;
    m.generation_tokens = 3;
    r.metrics.requests.push_back(m);
  }
  r.summary.tokens_per_second = 50;
  return r;
}

TEST(CompareParts, FiguresAServerDoesNotReportAreMarkedNotZero) {
  WorkloadResult local, unused;
  fill_runs(local, unused, 0.5);
  local.summary.kv_cache_usage_perc_mean = 0.3;
  const WorkloadResult server = server_run({"x"});
  const std::vector<Delta> deltas = comparison_deltas(local, server);
  std::map<std::string, const Delta*> by_metric;
  for (const Delta& d : deltas) by_metric[d.metric] = &d;
  for (const char* metric : {"KV usage mean", "KV usage peak", "fragmentation mean", "reserved-unused mean", "preemptions",
                             "prefix hit rate", "weight bytes", "attention scratch peak"}) {
    SCOPED_TRACE(metric);
    EXPECT_FALSE(by_metric.at(metric)->available);
    EXPECT_EQ(by_metric.at(metric)->not_reported_a, "");
    EXPECT_EQ(by_metric.at(metric)->not_reported_b, "llama.cpp");
  }
  EXPECT_TRUE(by_metric.at("throughput")->available) << "the client measures it";
  EXPECT_TRUE(by_metric.at("TTFT p50")->not_reported_b.empty());
  EXPECT_TRUE(by_metric.at("acceptance rate")->not_reported_b.empty()) << "nobody speculated: the row stays hidden";

  test_app();
  QTableWidget table;
  fill_delta_table(table, deltas);
  ASSERT_EQ(table.rowCount(), 12);
  EXPECT_EQ(table.item(4, 0)->text(), "KV usage mean");
  EXPECT_EQ(table.item(4, 1)->text(), "30.0 %");
  EXPECT_EQ(table.item(4, 2)->text(), "not reported by llama.cpp");
  EXPECT_EQ(table.item(4, 3)->text(), "—");
  EXPECT_EQ(table.item(4, 4)->text(), "—");
  EXPECT_EQ(table.item(0, 2)->text(), "50.0 tok/s");

  // Once A speculated, the acceptance rows say the server does not report them either.
  local.summary.spec.num_drafts = 4;
  local.summary.spec.num_draft_tokens = 8;
  for (const Delta& d : comparison_deltas(local, server)) {
    if (d.metric == "acceptance rate") {
      EXPECT_EQ(d.not_reported_b, "llama.cpp");
    }
  }
}

TEST(CompareParts, AServerSideIsComparedByItsText) {
  INFERSCOPE_REQUIRE_FILE(path, ::inferscope::test::shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  WorkloadResult local;
  const std::vector<TokenId> ids = model->tokenizer().encode("Once upon", false);
  local.outputs = {output(0, ids), output(1, ids)};
  local.outputs[0].text = local.outputs[1].text = "Once upon";
  const WorkloadResult server = server_run({"Once upon", "Once üpon a"});

  const std::vector<OutputPair> pairs = pair_outputs(model.get(), local, server);
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_TRUE(pairs[0].by_characters);
  EXPECT_EQ(pairs[0].divergence, -1);
  EXPECT_EQ(pairs[0].a.common, "Once upon");
  EXPECT_EQ(pairs[0].b.tokens, 3) << "a server side counts its usage's tokens";
  EXPECT_EQ(pairs[0].a.tokens, static_cast<int32_t>(ids.size()));
  // They part at character 5 (a two-byte "ü" on B's side, marked whole).
  EXPECT_EQ(pairs[1].divergence, 5);
  EXPECT_EQ(pairs[1].a.common, "Once ");
  EXPECT_EQ(pairs[1].a.marked, "u");
  EXPECT_EQ(pairs[1].b.marked, "ü");
  EXPECT_EQ(pairs[1].b.after, "pon a");
  EXPECT_EQ(divergence_text(5, true), "diverges at character 5");

  // Two servers need no model; one ending early parts where it stopped.
  const std::vector<OutputPair> servers = pair_outputs(nullptr, server_run({"abc"}), server_run({"ab"}));
  EXPECT_EQ(servers[0].divergence, 2);
  EXPECT_EQ(servers[0].a.marked, "c");
  EXPECT_EQ(servers[0].b.marked, "");
}

TEST(CompareParts, AServerSideIsNeverPromisedIdenticalOutputsAndItsSourceIsExported) {
  Comparison c;
  c.a.outputs = {output(0, {1, 2})};
  c.b = server_run({"x"});
  EXPECT_TRUE(outputs_must_match(c.a.config, c.a.config, c.sampling));
  EXPECT_FALSE(outputs_must_match(c.a, c.b, c.sampling));
  c.outputs = pair_outputs(nullptr, c.a, c.b);
  const nlohmann::json j = comparison_json(c);
  EXPECT_FALSE(j["outputs_must_match"].get<bool>());
  EXPECT_EQ(j["a"]["source"], "local engine");
  EXPECT_EQ(j["b"]["source"], "llama.cpp at http://127.0.0.1:8080 (tiny)");
  EXPECT_TRUE(j["b"]["config"].is_null());
  EXPECT_TRUE(j["differing_settings"].is_null());
  EXPECT_EQ(j["outputs"][0]["divergence_unit"], "character");
  for (const nlohmann::json& d : j["deltas"]) {
    if (d["metric"] == "KV usage mean") {
      EXPECT_TRUE(d["b"].is_null());
      EXPECT_EQ(d["b_not_reported_by"], "llama.cpp");
    }
  }
}

// A dry run as run_simulated_side leaves it: placeholder tokens, no attention measured, a device named.
WorkloadResult simulated_run(std::vector<TokenId> tokens) {
  WorkloadResult r;
  r.simulated_on = "NVIDIA H200";
  r.metrics.not_reported = {"attention_scratch_bytes", "attention_seconds", "matmul_seconds"};
  r.outputs = {output(0, std::move(tokens))};
  r.summary.tokens_per_second = 5000;
  r.summary.weight_bytes = 1 << 20;
  return r;
}

TEST(CompareParts, ASimulatedSideIsNotComparedAndShowsNoText) {
  INFERSCOPE_REQUIRE_FILE(path, ::inferscope::test::shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  Comparison c;
  c.a.outputs = {output(0, model->tokenizer().encode("Once upon", false))};
  c.b = simulated_run({1, 2, 3});
  EXPECT_FALSE(outputs_must_match(c.a, c.b, c.sampling)) << "the same config, but B's tokens are placeholders";
  c.outputs = pair_outputs(model.get(), c.a, c.b);
  ASSERT_EQ(c.outputs.size(), 1u);
  const OutputPair& p = c.outputs[0];
  EXPECT_FALSE(p.compared);
  EXPECT_EQ(p.divergence, -1);
  EXPECT_EQ(pair_verdict(p), "not compared: a side was simulated");
  EXPECT_NE(p.a.common.find("Once upon"), std::string::npos) << "the measured side's text is shown whole";
  EXPECT_TRUE(p.a.marked.empty() && p.a.after.empty()) << "nothing marked";
  EXPECT_TRUE(p.b.simulated);
  EXPECT_EQ(p.b.tokens, 3);
  EXPECT_TRUE(p.b.common.empty() && p.b.marked.empty() && p.b.after.empty()) << "no placeholder text";

  const QString html = outputs_html(c.outputs);
  EXPECT_TRUE(html.contains("simulated: no text"));
  EXPECT_FALSE(html.contains("identical"));
  EXPECT_FALSE(html.contains("diverges"));
  EXPECT_TRUE(verdict_html(c).contains("outputs not compared: B was simulated")) << verdict_html(c).toStdString();

  EXPECT_EQ(side_source(c.a), "local engine");
  EXPECT_EQ(side_source(c.b), "simulated on NVIDIA H200 (dry run)");
  const nlohmann::json j = comparison_json(c);
  EXPECT_FALSE(j["outputs_must_match"].get<bool>());
  EXPECT_FALSE(j["a"].contains("simulated_on"));
  EXPECT_EQ(j["b"]["simulated_on"], "NVIDIA H200");
  // The same configuration on a measured CPU and a simulated device: the differences are the devices'.
  EXPECT_TRUE(j["differing_settings"].empty());
  EXPECT_EQ(j["attribution_note"], attribution_note({}, false));
  EXPECT_NE(attribution_note({}, false).find("different devices"), std::string::npos);
  EXPECT_NE(attribution_note({"kv"}, false), "") << "one setting and a device: not attributable to the setting";
  EXPECT_EQ(j["b"]["source"], "simulated on NVIDIA H200 (dry run)");
  EXPECT_FALSE(j["b"]["config"].is_null()) << "the simulated configuration is exported";
  EXPECT_EQ(j["outputs"][0]["verdict"], "not compared: a side was simulated");
  EXPECT_TRUE(j["outputs"][0]["b"]["simulated"].get<bool>());
}

TEST(CompareParts, FiguresADryRunDoesNotMeasureAreMarkedNotZero) {
  WorkloadResult local;
  local.summary.attention_scratch_bytes_peak = 4096;
  local.summary.weight_bytes = 1 << 20;
  const WorkloadResult simulated = simulated_run({1});
  std::map<std::string, Delta> by_metric;
  for (const Delta& d : comparison_deltas(local, simulated)) by_metric[d.metric] = d;
  EXPECT_FALSE(by_metric.at("attention scratch peak").available);
  EXPECT_EQ(by_metric.at("attention scratch peak").not_reported_b, "a dry run");
  EXPECT_EQ(by_metric.at("attention scratch peak").not_reported_a, "");
  // The scheduler, KV manager and batching run for real: their figures stand.
  for (const char* metric : {"throughput", "KV usage mean", "preemptions", "prefix hit rate", "weight bytes"}) {
    EXPECT_TRUE(by_metric.at(metric).not_reported_b.empty()) << metric;
  }
  test_app();
  QTableWidget table;
  fill_delta_table(table, comparison_deltas(local, simulated));
  ASSERT_EQ(table.item(11, 0)->text(), "attention scratch peak");
  EXPECT_EQ(table.item(11, 2)->text(), "not reported by a dry run");
  EXPECT_EQ(table.item(11, 3)->text(), "—");
  // Shown as the dashboard's main run, its attention panel says why it is empty.
  EXPECT_EQ(not_reported_note(simulated.metrics, "attention"), "a dry run does not measure\nattention scratch or time");
  EXPECT_EQ(not_reported_note(simulated.metrics, "kv_usage"), "");
}

TEST(CompareParts, DeviceFilesAreReadWithABadOneReportedNotThrown) {
  test_app();
  QTemporaryDir dir;
  QFile bad(dir.filePath("broken.json"));
  ASSERT_TRUE(bad.open(QIODevice::WriteOnly));
  bad.write(R"({"name": "broken", "kind": "roofline"})");
  bad.close();
  ASSERT_TRUE(QFile::copy(QString::fromStdString(::inferscope::test::source_path("resources/devices/h200.json")),
                          dir.filePath("h200.json")));
  const std::vector<DeviceFile> files = device_files(dir.path());
  ASSERT_EQ(files.size(), 2u);
  EXPECT_FALSE(files[0].profile.has_value());
  EXPECT_TRUE(files[0].error.contains("broken.json")) << files[0].error.toStdString();
  ASSERT_TRUE(files[1].profile.has_value()) << files[1].error.toStdString();
  EXPECT_TRUE(files[1].profile->roofline.has_value());
  EXPECT_TRUE(device_pricing(*files[1].profile).roofline.has_value());
}

}  // namespace
}  // namespace inferscope::gui::test
