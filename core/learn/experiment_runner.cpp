#include "core/learn/experiment_runner.h"

#include <algorithm>
#include <span>
#include <stdexcept>
#include <utility>

#include "core/engine/config_overrides.h"
#include "core/engine/engine_core.h"
#include "core/workload/text_perplexity.h"
#include "core/learn/narration.h"
#include "core/model/llama_model.h"
#include "kernels/cpu/memory_bandwidth.h"
#include "kernels/cpu/peak_flops.h"
#include "kernels/cpu/thread_pool.h"

namespace inferscope {
namespace {

// True when any expression of the experiment names a value that starts with `prefix`.
bool names_value(const Experiment& e, const std::string& prefix) {
  auto mentions = [&](const std::string& s) { return s.find(prefix) != std::string::npos; };
  for (const std::string& n : e.narration) {
    if (mentions(n)) return true;
  }
  for (const auto& [name, expression] : e.values) {
    if (mentions(expression)) return true;
  }
  return std::any_of(e.conclusions.begin(), e.conclusions.end(),
                     [&](const ExperimentConclusion& c) { return mentions(c.condition) || mentions(c.text); });
}

bool uses_machine(const Experiment& e) {
  return names_value(e, "machine.") ||
         std::any_of(e.plots.begin(), e.plots.end(), [](const ExperimentPlot& p) { return p.kind == "roofline"; });
}

std::vector<AttentionBenchRow> attention_sweep(const ExperimentAttentionSweep& sweep, const LlamaModel& model,
                                               const EngineConfig& base) {
  AttentionBenchOptions o = attention_bench_options(model, base);
  o.contexts = sweep.contexts;
  o.repeats = sweep.repeats;
  ThreadPool pool(base.threads);
  return run_attention_sweep(o, pool);
}

// `perplexity_tokens`: the experiment's perplexity text, tokenized once for every run.
MeasuredRun measure(const Experiment& e, size_t index, const LlamaModel& model, const EngineConfig& base,
                    std::span<const TokenId> perplexity_tokens, const ExperimentRunOptions& options) {
  const ExperimentRun& run = e.runs[index];
  // kv_budget_tokens: a budget in tokens of this model's K/V (an experiment fits any model's size).
  nlohmann::json toggles = run.config;
  toggles.erase("kv_budget_tokens");
  EngineConfig config = apply_config_overrides(base, toggles, "run \"" + run.name + "\"");
  MeasuredRun m;
  m.name = run.name;
  m.kv_bytes_per_token = model.kv_geometry(config.kv_dtype).bytes_per_token();
  if (run.config.contains("kv_budget_tokens")) {
    config.kv.budget_bytes = run.config["kv_budget_tokens"].get<size_t>() * m.kv_bytes_per_token;
  }
  m.requests = materialize_workload(
      run.workload, [&](std::string_view text, bool add_bos) { return model.tokenizer().encode(text, add_bos); },
      model.config().vocab_size, 1);
  WorkloadRunOptions o;
  o.keep_logits = names_value(e, "max_logit_diff.");
  o.sampling.ignore_eos = true;  // greedy, each request to its output_tokens: runs stay comparable
  o.cancel = options.cancel;
  if (options.on_progress) o.on_progress = [&](int32_t done, int32_t total) { options.on_progress(index, done, total); };
  o.after_step = [&](const EngineCore& core) {
    const KvStats kv = core.kv_stats();
    // The fullest moment: the most memory held, and of that the most slots filled.
    const bool fuller = std::pair(kv.used_bytes, kv.filled_tokens) > std::pair(m.peak_kv.used_bytes, m.peak_kv.filled_tokens);
    if (!fuller && m.peak_kv.sequences > 0) return;
    m.peak_kv = kv;
    m.peak_blocks = core.kv_snapshot();
  };
  try {
    m.result = run_workload(model, config, m.requests, o);
    if (e.perplexity && !(options.cancel && options.cancel->load())) {
      m.perplexity = measure_text_perplexity(model, config, perplexity_tokens, e.perplexity->ctx).level.perplexity;
    }
  } catch (const std::invalid_argument& error) {
    throw std::runtime_error("run \"" + run.name + "\": " + error.what());
  }
  return m;
}

}  // namespace

void narrate(const Experiment& e, ExperimentResult& r) {
  for (const std::string& line : e.narration) r.narration.push_back(fill_narration(line, r.values));
  for (const ExperimentConclusion& c : e.conclusions) {
    if (c.condition.empty() || evaluate(c.condition, r.values) != 0) {
      r.conclusion = fill_narration(c.text, r.values);
      return;
    }
  }
}

ExperimentResult run_experiment(const Experiment& e, const LlamaModel& model, const EngineConfig& base,
                                const ExperimentRunOptions& options) {
  ExperimentResult r;
  add_model_values(r.values, model);
  if (uses_machine(e)) {
    ThreadPool pool(base.threads);
    r.values["machine.peak_flops"] = measure_peak_flops(pool, 0.2).flops_per_second;
    r.values["machine.read_bandwidth"] = measure_read_bandwidth(pool, size_t{256} << 20, 3).read_bytes_per_second;
  }
  if (e.attention_sweep) {
    r.attention_sweep = attention_sweep(*e.attention_sweep, model, base);
    add_sweep_values(r.values, r.attention_sweep);
  }
  const std::vector<TokenId> perplexity_tokens =
      e.perplexity ? model.tokenizer().encode(e.perplexity->text, true, false) : std::vector<TokenId>();
  for (size_t i = 0; i < e.runs.size(); ++i) {
    r.runs.push_back(measure(e, i, model, base, perplexity_tokens, options));
    if (options.cancel && options.cancel->load()) {
      r.cancelled = true;
      return r;
    }
    add_run_values(r.values, r.runs.back());
  }
  add_pair_values(r.values, r.runs, static_cast<size_t>(model.config().vocab_size));
  add_derived_values(r.values, e.values);
  narrate(e, r);
  return r;
}

}  // namespace inferscope
