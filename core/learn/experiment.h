// A guided experiment (the workbench's Learn tab; resources/experiments/*.json): a few runs of
// workloads on the loaded model that differ in one toggle, the values to derive from what they
// measured, a narration with those values filled in, and the conclusion the numbers support.
//
//   {
//     "title": "Paged vs contiguous KV cache",
//     "question": "Why do serving engines hand out KV memory in blocks?",
//     "explain": ["paragraph", ...],            what the learner should know first
//     "look_at": "The block tables ...",         what to watch while it runs
//     "runs": [                                  run in order, each on a fresh engine over the model
//       {"name": "paged", "config": {"kv": "paged"},     config: demo-script toggles over the
//        "workload": "resources/workloads/x.json"},      workbench's config (config_overrides.h)
//       {"name": "contiguous", "config": {"kv": "contiguous", "kv_budget_tokens": 2048},   a budget in
//        tokens of the model's K/V
//        "workload": {"requests": [...]}}       a workload file or one inline (serve-sim's format)
//     ],
//     "values": {"waste_ratio": "contiguous.kv_reserved_unused_perc_mean / ..."},   derived values
//     "narration": ["{paged.max_concurrent_requests} requests ran at once ..."],     narration.h
//     "conclusions": [{"if": "waste_ratio > 2", "then": "..."}, {"otherwise": "..."}],
//     "plots": [{"plot": "kv_blocks", "runs": ["paged", "contiguous"]}],
//     "perplexity": {"text": "resources/text/perplexity-sample.txt", "ctx": 128},   optional: every run
//                                                also scores the text at its config (RUN.perplexity)
//     "attention_sweep": {"contexts": [64, 256, 1024], "repeats": 3}    optional: one attention call
//                                                per context, naive vs flash, on the model's shape (sweep.*)
//   }
// The values every run measures are listed in experiment_values.h.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/workload/workload.h"

namespace inferscope {

struct ExperimentRun {
  std::string name;
  nlohmann::json config = nlohmann::json::object();  // toggles over the base config
  Workload workload;
  std::string workload_source;  // the file, or "inline"
};

struct ExperimentConclusion {
  std::string condition;  // empty: "otherwise"
  std::string text;
};

// What the Learn tab draws after the runs: "timeline" (each request's waiting, prefill and decode),
// "roofline" (every step by arithmetic intensity under the machine's roofs), "kv_blocks" (the block
// table at the run's peak KV use), "steps" (tokens per step), "bars" (one value of each run:
// RUN.<value>, titled `title`), "kv_token" (one token adding its K and V at every layer, in this
// model's numbers), "prefix_hits" (each request's prompt with the part found in the prefix cache
// highlighted), "attention_sweep" (the sweep's time and scratch per context, naive and flash),
// "spec_tokens" (each output token coloured by how speculation produced it), "acceptance" (the
// share of drafts accepted at each draft position).
struct ExperimentPlot {
  std::string kind;
  std::vector<std::string> runs;
  std::string value, title;  // bars only
};

struct ExperimentPerplexity {
  std::string source;  // the text file
  std::string text;    // its contents, read when the experiment is parsed
  int64_t ctx = 128;   // window length (perplexity --ctx)
};

struct ExperimentAttentionSweep {
  std::vector<int32_t> contexts;  // ascending
  int32_t repeats = 3;            // timed calls per point
};

struct Experiment {
  std::string id;  // the file's base name
  std::string title, question, look_at;
  std::vector<std::string> explain;
  std::vector<ExperimentRun> runs;
  std::vector<std::pair<std::string, std::string>> values;  // name, expression
  std::vector<std::string> narration;
  std::vector<ExperimentConclusion> conclusions;
  std::vector<ExperimentPlot> plots;
  std::optional<ExperimentPerplexity> perplexity;
  std::optional<ExperimentAttentionSweep> attention_sweep;

  // Throws std::runtime_error naming `source`, the field and the value for anything malformed;
  // workload files are read relative to the working directory, then `resource_root`.
  static Experiment parse(const nlohmann::json& root, const std::string& source, const std::string& resource_root);
  // An experiment file's text; also throws std::runtime_error "SOURCE: not valid JSON: ...".
  static Experiment parse_text(std::string_view text, const std::string& source, const std::string& resource_root);
  // `path` is resources/experiments/NAME.json: its workloads resolve against the folder holding resources/.
  static Experiment load(const std::string& path);
};

// The plot kinds an experiment may ask for.
const std::vector<std::string>& experiment_plot_kinds();

}  // namespace inferscope
