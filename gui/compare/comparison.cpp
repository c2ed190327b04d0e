#include "gui/compare/comparison.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "core/workload/serve_summary.h"
#include "core/model/llama_model.h"
#include "gui/compare/config_difference.h"
#include "core/engine/config_overrides.h"

namespace inferscope::gui {
namespace {

// The pieces of tokens [begin, end) as one string.
std::string pieces(const Tokenizer& tokenizer, std::span<const TokenId> tokens, size_t begin, size_t end) {
  std::string text;
  for (size_t i = begin; i < std::min(end, tokens.size()); ++i) text += tokenizer.token_to_piece(tokens[i]);
  return text;
}

OutputSide cut_tokens(const Tokenizer& tokenizer, const WorkloadOutput& out, int divergence) {
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

// The bytes of the UTF-8 character starting at `at` (continuation bytes follow its lead byte).
size_t character_bytes(std::string_view text, size_t at) {
  size_t n = 1;
  while (at + n < text.size() && (static_cast<unsigned char>(text[at + n]) & 0xC0) == 0x80) ++n;
  return n;
}

// Where two texts part, as {byte offset of the first differing character, its index in characters};
// {npos, -1} when they are identical.
std::pair<size_t, int> text_divergence(std::string_view a, std::string_view b) {
  if (a == b) return {std::string_view::npos, -1};
  size_t at = 0;
  int characters = 0;
  while (at < a.size() && at < b.size()) {
    const size_t n = character_bytes(a, at);
    if (a.substr(at, n) != b.substr(at, n)) break;
    at += n;
    ++characters;
  }
  return {at, characters};
}

// A side's generated tokens: its ids, or for a server's text the count its usage gave.
int32_t generated_tokens(const WorkloadResult& run, const WorkloadOutput& out) {
  if (!ran_on_server(run)) return static_cast<int32_t>(out.tokens.size());
  for (const RequestMetrics& r : run.metrics.requests) {
    if (r.id == out.id) return r.generation_tokens;
  }
  return 0;
}

OutputSide cut_text(const WorkloadResult& run, const WorkloadOutput& out, size_t at) {
  const std::string_view text(out.text);
  OutputSide side;
  side.finish_reason = out.finish_reason;
  side.tokens = generated_tokens(run, out);
  const size_t end = std::min(at, text.size());
  side.common = text.substr(0, end);
  if (end < text.size()) {
    side.marked = text.substr(end, character_bytes(text, end));
    side.after = text.substr(end + side.marked.size());
  }
  return side;
}

// The name of a server side's server ("vLLM" of "vLLM at http://…").
std::string server_name(const WorkloadResult& run) {
  const std::string& source = run.metrics.source;
  return source.substr(0, source.find(" at "));
}

nlohmann::json delta_value(double value, const std::string& lacking) {
  return lacking.empty() ? nlohmann::json(value) : nlohmann::json();
}

const char* verdict_name(DeltaVerdict v) {
  switch (v) {
    case DeltaVerdict::Better: return "better";
    case DeltaVerdict::Worse: return "worse";
    case DeltaVerdict::Unchanged: return "unchanged";
    case DeltaVerdict::WithinSpread: return "within_spread";
    case DeltaVerdict::Neutral: break;
  }
  return "neutral";
}

nlohmann::json side_json(const OutputSide& s) {
  nlohmann::json j = {{"common", s.common}, {"first_divergent_token", s.marked}, {"after", s.after},
                      {"tokens", s.tokens}, {"finish_reason", s.finish_reason}};
  if (s.simulated) j["simulated"] = true;
  return j;
}

// A simulated side's output: how many placeholder tokens it ran to and why it stopped, no text.
OutputSide simulated_output(const WorkloadOutput& out) {
  OutputSide side;
  side.finish_reason = out.finish_reason;
  side.tokens = static_cast<int32_t>(out.tokens.size());
  side.simulated = true;
  return side;
}

// A side of a pair where the other was simulated: its whole text, nothing marked.
OutputSide uncompared_output(const LlamaModel* model, const WorkloadResult& run, const WorkloadOutput& out) {
  if (ran_simulated(run)) return simulated_output(out);
  return ran_on_server(run) ? cut_text(run, out, std::string_view::npos) : cut_tokens(model->tokenizer(), out, -1);
}

// Every figure of the delta table (the serve figures with a label), one run per side: unavailable
// where it applies to neither side or neither measured it, and named per side where a side does not
// report it.
std::vector<Delta> figures(const WorkloadResult& ra, const WorkloadResult& rb) {
  std::vector<Delta> deltas;
  for (const ServeFigure& f : serve_figures()) {
    if (f.label.empty()) continue;
    Delta d;
    d.metric = f.label;
    d.unit = f.unit;
    d.a = f.value(ra.summary);
    d.b = f.value(rb.summary);
    d.better = f.better;
    d.neutral_reason = f.neutral_reason;
    const bool applies = f.applies == nullptr || f.applies(ra.summary) || f.applies(rb.summary);
    // who does not report it: a side that lists it, or a server whose zero means unmeasured
    const auto side_lacking = [&](const WorkloadResult& r, double value) {
      if (!figure_unmeasured(f, r.metrics, value)) return std::string();
      return ran_simulated(r) ? std::string("a dry run") : server_name(r);
    };
    if (applies) {
      d.not_reported_a = side_lacking(ra, d.a);
      d.not_reported_b = side_lacking(rb, d.b);
    }
    d.available = applies && d.not_reported_a.empty() && d.not_reported_b.empty() &&
                  (!f.zero_is_unmeasured || d.a > 0 || d.b > 0);
    deltas.push_back(std::move(d));
  }
  return deltas;
}

}  // namespace

bool ran_on_server(const WorkloadResult& run) { return !run.metrics.source.empty(); }

bool ran_simulated(const WorkloadResult& run) { return !run.simulated_on.empty(); }

std::string side_source(const WorkloadResult& run) {
  if (ran_simulated(run)) return "simulated on " + run.simulated_on + " (dry run)";
  return ran_on_server(run) ? run.metrics.source : "local engine";
}

std::vector<OutputPair> pair_outputs(const LlamaModel* model, const WorkloadResult& a, const WorkloadResult& b) {
  std::map<RequestId, const WorkloadOutput*> by_id;
  for (const WorkloadOutput& out : b.outputs) by_id[out.id] = &out;
  const WorkloadOutput none;
  std::vector<OutputPair> pairs;
  for (const WorkloadOutput& out_a : a.outputs) {
    const auto it = by_id.find(out_a.id);
    const WorkloadOutput& out_b = it == by_id.end() ? none : *it->second;
    OutputPair p;
    p.id = out_a.id;
    p.compared = !ran_simulated(a) && !ran_simulated(b);
    p.by_characters = ran_on_server(a) || ran_on_server(b);
    if (!p.compared) {
      p.a = uncompared_output(model, a, out_a);
      p.b = uncompared_output(model, b, out_b);
    } else if (p.by_characters) {
      const auto [at, characters] = text_divergence(out_a.text, out_b.text);
      p.divergence = characters;
      p.a = cut_text(a, out_a, at);
      p.b = cut_text(b, out_b, at);
    } else {
      p.divergence = first_divergence(out_a.tokens, out_b.tokens);
      p.a = cut_tokens(model->tokenizer(), out_a, p.divergence);
      p.b = cut_tokens(model->tokenizer(), out_b, p.divergence);
    }
    pairs.push_back(std::move(p));
  }
  return pairs;
}

std::vector<Delta> comparison_deltas(const WorkloadResult& ra, const WorkloadResult& rb) {
  std::vector<Delta> deltas = figures(ra, rb);
  for (Delta& d : deltas) {
    d.spread_a = {d.a, d.a, 1, ran_simulated(ra)};
    d.spread_b = {d.b, d.b, 1, ran_simulated(rb)};
  }
  return deltas;
}

std::vector<Delta> comparison_deltas(const Comparison& c) {
  std::vector<Delta> deltas = comparison_deltas(c.a, c.b);
  // Every further run's figures, each computed once.
  std::vector<std::vector<Delta>> more_a, more_b;
  for (const WorkloadResult& run : c.reruns_a) more_a.push_back(figures(run, c.b));
  for (const WorkloadResult& run : c.reruns_b) more_b.push_back(figures(c.a, run));
  // A figure over one side's runs: its median and range.
  const auto over_runs = [](double first, const std::vector<std::vector<Delta>>& more, size_t row, bool side_a, bool exact) {
    std::vector<double> values{first};
    for (const std::vector<Delta>& run : more) values.push_back(side_a ? run[row].a : run[row].b);
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    return std::pair{quantile(values, 0.5), RunSpread{*lo, *hi, static_cast<int>(values.size()), exact}};
  };
  for (size_t row = 0; row < deltas.size(); ++row) {
    std::tie(deltas[row].a, deltas[row].spread_a) = over_runs(deltas[row].a, more_a, row, true, ran_simulated(c.a));
    std::tie(deltas[row].b, deltas[row].spread_b) = over_runs(deltas[row].b, more_b, row, false, ran_simulated(c.b));
  }
  return deltas;
}

DeltaVerdict delta_verdict(const Delta& d) {
  if (d.b == d.a) return DeltaVerdict::Unchanged;
  if (d.better == Better::Neither) return DeltaVerdict::Neutral;
  // A change counts only when every run of B lies beyond every run of A.
  const bool beyond = d.b > d.a ? d.spread_b.lo > d.spread_a.hi : d.spread_b.hi < d.spread_a.lo;
  if (!d.spread_a.measured() || !d.spread_b.measured() || !beyond) return DeltaVerdict::WithinSpread;
  return (d.b > d.a) == (d.better == Better::Higher) ? DeltaVerdict::Better : DeltaVerdict::Worse;
}

double relative_change(double a, double b) {
  return a == 0 ? std::numeric_limits<double>::quiet_NaN() : (b - a) / a;
}

std::string divergence_text(int divergence, bool by_characters) {
  if (divergence < 0) return "identical";
  return std::string(by_characters ? "diverges at character " : "diverges at token ") + std::to_string(divergence);
}

std::string pair_verdict(const OutputPair& p) {
  return p.compared ? divergence_text(p.divergence, p.by_characters) : "not compared: a side was simulated";
}

bool outputs_must_match(const EngineConfig& a, const EngineConfig& b, const SamplingParams& sampling) {
  const bool greedy = sampling.temperature <= 0;
  return a.kv_dtype == b.kv_dtype && a.context_length == b.context_length && a.attention == b.attention &&
         a.quant == b.quant && a.forward.matmul.activations == b.forward.matmul.activations && (greedy || a.spec == b.spec);
}

bool outputs_must_match(const WorkloadResult& a, const WorkloadResult& b, const SamplingParams& sampling) {
  return !ran_on_server(a) && !ran_on_server(b) && !ran_simulated(a) && !ran_simulated(b) &&
         outputs_must_match(a.config, b.config, sampling);
}

nlohmann::json comparison_json(const Comparison& c) {
  nlohmann::json deltas = nlohmann::json::array();
  for (const Delta& d : comparison_deltas(c)) {
    const bool not_reported = !d.not_reported_a.empty() || !d.not_reported_b.empty();
    if (!d.available && !not_reported) continue;
    const double change = relative_change(d.a, d.b);
    const auto when_reported = [&](double v) { return not_reported ? nlohmann::json() : nlohmann::json(v); };
    deltas.push_back({{"metric", d.metric}, {"unit", metric_unit_name(d.unit)}, {"a", delta_value(d.a, d.not_reported_a)},
                      {"b", delta_value(d.b, d.not_reported_b)}, {"b_minus_a", when_reported(d.b - d.a)},
                      {"relative_change", std::isnan(change) || not_reported ? nlohmann::json() : nlohmann::json(change)},
                      {"better", d.better == Better::Neither ? nlohmann::json()
                                                              : nlohmann::json(d.better == Better::Higher ? "higher" : "lower")},
                      {"verdict", verdict_name(delta_verdict(d))}});
    if (!d.neutral_reason.empty()) deltas.back()["not_coloured_because"] = d.neutral_reason;
    if (!not_reported) {
      for (const auto& [key, spread] : {std::pair{"a_runs", &d.spread_a}, std::pair{"b_runs", &d.spread_b}}) {
        deltas.back()[key] = {{"runs", spread->runs}, {"min", spread->lo}, {"max", spread->hi}, {"exact", spread->exact}};
      }
    }
    if (!d.not_reported_a.empty()) deltas.back()["a_not_reported_by"] = d.not_reported_a;
    if (!d.not_reported_b.empty()) deltas.back()["b_not_reported_by"] = d.not_reported_b;
  }
  nlohmann::json outputs = nlohmann::json::array();
  for (const OutputPair& p : c.outputs) {
    outputs.push_back({{"id", p.id},
                       {"first_divergence", p.divergence < 0 ? nlohmann::json() : nlohmann::json(p.divergence)},
                       {"divergence_unit", p.by_characters ? "character" : "token"},
                       {"verdict", pair_verdict(p)},
                       {"synthetic_prompt", p.synthetic_prompt},
                       {"a", side_json(p.a)},
                       {"b", side_json(p.b)}});
  }
  const auto run = [](const WorkloadResult& r) {
    nlohmann::json j = workload_json(r, true);
    j["source"] = side_source(r);
    j["config"] = ran_on_server(r) ? nlohmann::json() : config_overrides_of(r.config);
    j["weights_quant"] = r.metrics.weights_quant;
    j["weight_bytes"] = r.metrics.weight_bytes;
    if (ran_simulated(r)) j["simulated_on"] = r.simulated_on;
    return j;
  };
  // Settings say what differs only between two local configurations.
  const bool local = !ran_on_server(c.a) && !ran_on_server(c.b);
  const std::vector<std::string> differing = local ? differing_settings(c.a.config, c.b.config) : std::vector<std::string>();
  const std::string note = local ? attribution_note(differing, c.a.simulated_on == c.b.simulated_on) : std::string();
  return {{"format", "inferscope-comparison-1"},
          {"workload", c.workload},
          {"cancelled", c.cancelled},
          {"runs_per_side", {1 + c.reruns_a.size(), 1 + c.reruns_b.size()}},
          {"sampling", {{"temperature", c.sampling.temperature}, {"seed", c.sampling.seed}, {"ignore_eos", c.sampling.ignore_eos}}},
          {"outputs_must_match", outputs_must_match(c.a, c.b, c.sampling)},
          {"differing_settings", local ? nlohmann::json(differing) : nlohmann::json()},
          {"attribution_note", note.empty() ? nlohmann::json() : nlohmann::json(note)},
          {"a", run(c.a)},
          {"b", run(c.b)},
          {"deltas", std::move(deltas)},
          {"outputs", std::move(outputs)}};
}

}  // namespace inferscope::gui
