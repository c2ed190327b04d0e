// An A/B comparison's results as plain data (no widgets): both runs of one workload (each on the
// local engine, on a server or simulated on a device), each request's outputs side by side with the first token (or, with a
// server, character) where they part, the table of deltas (B against A), and the whole thing as JSON
// for export.
#pragma once
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/workload/workload_runner.h"

namespace inferscope {
class LlamaModel;
}

namespace inferscope::gui {

// One side of a request's output, cut where the two sides part.
struct OutputSide {
  std::string common;  // the tokens both sides share (all of them when identical)
  std::string marked;  // the first token that differs ("" when none: identical, or this side ended)
  std::string after;   // the rest
  std::string finish_reason;
  int32_t tokens = 0;
  bool simulated = false;  // a dry run's placeholder tokens: no text to show (common, marked and after are empty)
};

struct OutputPair {
  RequestId id = 0;
  int divergence = -1;         // first_divergence of the two token lists, or of the texts' characters
  bool by_characters = false;  // a side ran on a server (text, no token ids): the texts were compared
  bool compared = true;        // false when a side was simulated: placeholder tokens are no output (divergence -1)
  bool synthetic_prompt = false;  // its prompt is pseudo-random token ids: the outputs are no answer to read
  OutputSide a, b;
};

// The values one side's runs gave a figure: their range, and how many runs.
struct RunSpread {
  double lo = 0, hi = 0;
  int runs = 1;
  bool exact = false;  // a dry run: every run gives the same figures, so one run measures its spread (none)
  // Whether the spread is known: two runs or more, or an exact side.
  bool measured() const { return runs >= 2 || exact; }
};

// One row of the delta table, B against A: a figure of serve_figures() (core/workload/serve_summary.h).
struct Delta {
  std::string metric;  // its label: "throughput"
  MetricUnit unit = MetricUnit::Count;
  double a = 0, b = 0;
  Better better = Better::Neither;
  std::string neutral_reason;  // Neither: why the change is not called better or worse
  bool available = true;       // false: the runs do not measure it (weight bytes of an older engine)
  // What does not report it on that side (a server, "vLLM"; "a dry run" for a simulated side), "" where the
  // side does: then available is false.
  std::string not_reported_a, not_reported_b;
  // Each side's runs of the figure (a and b are their medians).
  RunSpread spread_a, spread_b;
};

// How the table reads B's change: better or worse where the metric has a direction and B's runs all
// lie beyond A's (the ranges do not overlap); within the spread where they overlap or a side's spread
// was not measured (one run); neutral without a direction; unchanged when B equals A.
enum class DeltaVerdict { Better, Worse, Unchanged, Neutral, WithinSpread };
DeltaVerdict delta_verdict(const Delta& delta);

struct Comparison {
  std::string workload;     // where the requests came from: "chat: <session>", a file name
  SamplingParams sampling;  // both runs'
  WorkloadResult a, b;      // each side's first run: its outputs and its charts
  // Each side's further runs, alternating A, B, A, B with the first ones, for the run-to-run spread
  // (none for a simulated side: a dry run gives the same figures every time).
  std::vector<WorkloadResult> reruns_a, reruns_b;
  std::vector<OutputPair> outputs;  // by request id
  bool cancelled = false;

  // The runs of the side that ran most (a simulated side runs once).
  int runs_per_side() const { return 1 + static_cast<int>(std::max(reruns_a.size(), reruns_b.size())); }
};

// True when the run was served by a remote server (its metrics name their source).
bool ran_on_server(const WorkloadResult& run);
// True when the run was a dry run priced on a device (simulated_on names it): its figures are modelled.
bool ran_simulated(const WorkloadResult& run);
// "local engine", the server's source ("vLLM at http://host:8000 (model)"), or "simulated on <device> (dry run)".
std::string side_source(const WorkloadResult& run);

// The outputs of two runs paired by request id and cut at their first divergence. Two local runs
// compare token ids, the pieces being `model`'s token texts; when a side ran on a server (text only),
// the texts are compared character by character (UTF-8 code points) and `model` may be null. When a
// side was simulated nothing is compared: that side shows no text (its tokens are placeholders).
std::vector<OutputPair> pair_outputs(const LlamaModel* model, const WorkloadResult& a, const WorkloadResult& b);
// Throughput, TTFT p50/p99, e2e p50, KV usage mean/peak, fragmentation, reserved-unused,
// preemptions, prefix hit rate, weight bytes and peak attention scratch (when measured) of both runs;
// acceptance rate and mean acceptance length when either run speculated. A figure a server side does
// not report (its metrics' not_reported) is unavailable, with that server named, rather than 0; so
// is one a simulated side does not measure (attention: a dry run runs none), named "a dry run".
// One run per side: each figure's spread is that run alone (measured only for a dry run).
std::vector<Delta> comparison_deltas(const WorkloadResult& a, const WorkloadResult& b);
// Every run of each side: each figure the median of its runs, its spread their range.
std::vector<Delta> comparison_deltas(const Comparison& comparison);
// (b - a) / a, NaN when a is 0 (no relative change to speak of).
double relative_change(double a, double b);
// "identical" or "diverges at token N" (N counted from 0 over generated tokens; "character N" when
// the texts were compared).
std::string divergence_text(int divergence, bool by_characters = false);
// What the pair's verdict reads: divergence_text, or "not compared: a side was simulated".
std::string pair_verdict(const OutputPair& pair);

// True when A and B must give identical outputs: they differ in exact features only (KV layout,
// block size, budget, prefix cache, scheduler and its limits, threads; and speculative decoding
// under greedy sampling, where the verifier keeps exactly the target's choices), so every token's
// logits are bit-identical. With sampling, speculation keeps only the target's distribution: the
// draws, and so the text, may differ.
bool outputs_must_match(const EngineConfig& a, const EngineConfig& b, const SamplingParams& sampling);
// The same for two runs: false when either ran on a server (its numerics are its own) or was simulated
// (its tokens are placeholders).
bool outputs_must_match(const WorkloadResult& a, const WorkloadResult& b, const SamplingParams& sampling);

// Both sides' sources, configs (null for a server) and, for a simulated side, "simulated_on", the settings they differ in and what that
// allows (attribution_note; both null when one setting differs or a side is a server), summaries
// (workload_json, with every step), the deltas and the paired outputs. No API key: runs hold none.
nlohmann::json comparison_json(const Comparison& comparison);

}  // namespace inferscope::gui
