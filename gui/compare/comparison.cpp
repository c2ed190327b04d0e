#include "gui/compare/comparison.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "core/model/llama_model.h"
#include "gui/compare/config_difference.h"
#include "gui/config/engine_config_text.h"

namespace inferscope::gui {
namespace {

// The pieces of tokens [begin, end) as one string.
std::string pieces(const Tokenizer& tokenizer, std::span<const TokenId> tokens, size_t begin, size_t end) {
  std::string text;
  for (size_t i = begin; i < std::min(end, tokens.size()); ++i) text += tokenizer.token_to_piece(tokens[i]);
  return text;
}

OutputSide cut(const Tokenizer& tokenizer, const WorkloadOutput& out, int divergence) {
  const std::span<const TokenId> t(out.tokens);
  OutputSide side;
  side.finish_reason = out.finish_reason;
  side.tokens = static_cast<int32_t>(t.size());
  const size_t at = divergence < 0 ? t.size() : static_cast<size_t>(divergence);
  side.common = pieces(tokenizer, t, 0, at);
  side.marked = pieces(tokenizer, t, at, at + 1);
  side.after = pieces(tokenizer, t, at + 1, t.size());
  return side;
}

// A delta table row whose change is better one way.
Delta directed(std::string metric, std::string unit, double a, double b, Better better, bool available = true) {
  return {std::move(metric), std::move(unit), a, b, better, {}, available};
}

// A row with no better direction on its own, and why.
Delta undirected(std::string metric, std::string unit, double a, double b, std::string reason, bool available = true) {
  return {std::move(metric), std::move(unit), a, b, Better::Neither, std::move(reason), available};
}

const char* verdict_name(DeltaVerdict v) {
  switch (v) {
    case DeltaVerdict::Better: return "better";
    case DeltaVerdict::Worse: return "worse";
    case DeltaVerdict::Unchanged: return "unchanged";
    case DeltaVerdict::Neutral: break;
  }
  return "neutral";
}

nlohmann::json side_json(const OutputSide& s) {
  return {{"common", s.common}, {"first_divergent_token", s.marked}, {"after", s.after},
          {"tokens", s.tokens}, {"finish_reason", s.finish_reason}};
}

}  // namespace

std::vector<OutputPair> pair_outputs(const LlamaModel& model, const WorkloadResult& a, const WorkloadResult& b) {
  std::map<RequestId, const WorkloadOutput*> by_id;
  for (const WorkloadOutput& out : b.outputs) by_id[out.id] = &out;
  const WorkloadOutput none;
  std::vector<OutputPair> pairs;
  for (const WorkloadOutput& out_a : a.outputs) {
    const auto it = by_id.find(out_a.id);
    const WorkloadOutput& out_b = it == by_id.end() ? none : *it->second;
    OutputPair p;
    p.id = out_a.id;
    p.divergence = first_divergence(out_a.tokens, out_b.tokens);
    p.a = cut(model.tokenizer(), out_a, p.divergence);
    p.b = cut(model.tokenizer(), out_b, p.divergence);
    pairs.push_back(std::move(p));
  }
  return pairs;
}

std::vector<Delta> comparison_deltas(const WorkloadResult& ra, const WorkloadResult& rb) {
  const ServeSummary &a = ra.summary, &b = rb.summary;
  const auto bytes = [](const WorkloadResult& r) { return static_cast<double>(r.metrics.weight_bytes); };
  const auto scratch = [](const WorkloadResult& r) {
    size_t peak = 0;
    for (const StepMetrics& step : r.metrics.steps) peak = std::max(peak, step.attention_scratch_bytes);
    return static_cast<double>(peak);
  };
  const bool speculated = ra.metrics.spec.num_drafts > 0 || rb.metrics.spec.num_drafts > 0;
  const char* const usage =
      "Not coloured: more KV in use can mean more requests served at once, or reservations never written "
      "(a contiguous cache counts whole reserved contexts as used); neither is better on its own.";
  return {
      directed("throughput", "tok/s", a.tokens_per_second, b.tokens_per_second, Better::Higher),
      directed("TTFT p50", "s", a.time_to_first_token_seconds_p50, b.time_to_first_token_seconds_p50, Better::Lower),
      directed("TTFT p99", "s", a.time_to_first_token_seconds_p99, b.time_to_first_token_seconds_p99, Better::Lower),
      directed("e2e latency p50", "s", a.e2e_request_latency_seconds_p50, b.e2e_request_latency_seconds_p50, Better::Lower),
      undirected("KV usage mean", "%", a.kv_cache_usage_perc_mean, b.kv_cache_usage_perc_mean, usage),
      undirected("KV usage peak", "%", a.kv_cache_usage_perc_peak, b.kv_cache_usage_perc_peak, usage),
      undirected("fragmentation mean", "%", a.kv_internal_fragmentation_perc_mean, b.kv_internal_fragmentation_perc_mean,
                 "Not coloured: a contiguous cache reports 0 % fragmentation while most of its reservation goes "
                 "unused; read it with reserved-unused."),
      undirected("reserved-unused mean", "%", a.kv_reserved_unused_perc_mean, b.kv_reserved_unused_perc_mean,
                 "Not coloured: a paged cache reports 0 % reserved-unused while its last blocks are partly empty; "
                 "read it with fragmentation."),
      directed("preemptions", "count", static_cast<double>(a.num_preemptions), static_cast<double>(b.num_preemptions),
               Better::Lower),
      directed("prefix hit rate", "%", a.prefix_cache_hit_rate, b.prefix_cache_hit_rate, Better::Higher),
      undirected("weight bytes", "bytes", bytes(ra), bytes(rb),
                 "Not coloured: fewer weight bytes per step trade precision for speed; judge them by throughput and "
                 "the outputs.",
                 ra.metrics.weight_bytes > 0 && rb.metrics.weight_bytes > 0),
      directed("attention scratch peak", "bytes", scratch(ra), scratch(rb), Better::Lower,
               scratch(ra) > 0 || scratch(rb) > 0),
      undirected("acceptance rate", "%", ra.metrics.spec.acceptance_rate(), rb.metrics.spec.acceptance_rate(),
                 "Not coloured: a smaller k or a stricter p-min accepts a larger share of fewer drafts; the mean "
                 "acceptance length and throughput say what speculation gains.",
                 speculated),
      directed("mean acceptance length", "tokens", ra.metrics.spec.mean_acceptance_length(),
               rb.metrics.spec.mean_acceptance_length(), Better::Higher, speculated),
  };
}

DeltaVerdict delta_verdict(const Delta& d) {
  if (d.b == d.a) return DeltaVerdict::Unchanged;
  if (d.better == Better::Neither) return DeltaVerdict::Neutral;
  return (d.b > d.a) == (d.better == Better::Higher) ? DeltaVerdict::Better : DeltaVerdict::Worse;
}

double relative_change(double a, double b) {
  return a == 0 ? std::numeric_limits<double>::quiet_NaN() : (b - a) / a;
}

std::string divergence_text(int divergence) {
  return divergence < 0 ? "identical" : "diverges at token " + std::to_string(divergence);
}

bool outputs_must_match(const EngineConfig& a, const EngineConfig& b, const SamplingParams& sampling) {
  const bool greedy = sampling.temperature <= 0;
  return a.kv_dtype == b.kv_dtype && a.context_length == b.context_length && a.attention == b.attention &&
         a.quant == b.quant && a.matmul.activations == b.matmul.activations && (greedy || a.spec == b.spec);
}

nlohmann::json comparison_json(const Comparison& c) {
  nlohmann::json deltas = nlohmann::json::array();
  for (const Delta& d : comparison_deltas(c.a, c.b)) {
    if (!d.available) continue;
    const double change = relative_change(d.a, d.b);
    deltas.push_back({{"metric", d.metric}, {"unit", d.unit}, {"a", d.a}, {"b", d.b}, {"b_minus_a", d.b - d.a},
                      {"relative_change", std::isnan(change) ? nlohmann::json() : nlohmann::json(change)},
                      {"better", d.better == Better::Neither ? nlohmann::json()
                                                              : nlohmann::json(d.better == Better::Higher ? "higher" : "lower")},
                      {"verdict", verdict_name(delta_verdict(d))}});
    if (!d.neutral_reason.empty()) deltas.back()["not_coloured_because"] = d.neutral_reason;
  }
  nlohmann::json outputs = nlohmann::json::array();
  for (const OutputPair& p : c.outputs) {
    outputs.push_back({{"id", p.id},
                       {"first_divergence", p.divergence < 0 ? nlohmann::json() : nlohmann::json(p.divergence)},
                       {"verdict", divergence_text(p.divergence)},
                       {"a", side_json(p.a)},
                       {"b", side_json(p.b)}});
  }
  const auto run = [](const WorkloadResult& r) {
    nlohmann::json j = workload_json(r, true);
    j["config"] = engine_config_json(r.config);
    j["weights_quant"] = r.metrics.weights_quant;
    j["weight_bytes"] = r.metrics.weight_bytes;
    return j;
  };
  const std::vector<std::string> differing = differing_settings(c.a.config, c.b.config);
  const std::string note = attribution_note(differing);
  return {{"format", "inferscope-comparison-1"},
          {"workload", c.workload},
          {"cancelled", c.cancelled},
          {"sampling", {{"temperature", c.sampling.temperature}, {"seed", c.sampling.seed}, {"ignore_eos", c.sampling.ignore_eos}}},
          {"outputs_must_match", outputs_must_match(c.a.config, c.b.config, c.sampling)},
          {"differing_settings", differing},
          {"attribution_note", note.empty() ? nlohmann::json() : nlohmann::json(note)},
          {"a", run(c.a)},
          {"b", run(c.b)},
          {"deltas", std::move(deltas)},
          {"outputs", std::move(outputs)}};
}

}  // namespace inferscope::gui
