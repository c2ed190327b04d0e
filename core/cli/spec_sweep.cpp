#include "core/cli/spec_sweep.h"

#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/common/text_format.h"
#include "core/engine/sync_engine.h"
#include "core/spec/draft_length.h"

namespace inferscope::cli {
namespace {

// One configuration's run, averaged over its repetitions.
struct SweepRow {
  int32_t k = 0;                  // the spec's k (SpecConfig::kAutoK: chosen per step); 0 for plain decoding too
  double tokens_per_second = 0;   // output tokens after the first over the decode time
  double step_seconds = 0;        // mean decode step (speculative: draft + verify)
  double draft_seconds = 0;       // mean per speculative step
  double verify_seconds = 0;      // mean per speculative step
  double acceptance_rate = 0;
  double mean_acceptance_length = 1;
};

// One configuration's engine and what its repetitions measured.
class SweepRun {
 public:
  SweepRun(const LlamaModel& model, const EngineConfig& config) : k_(config.spec.k), engine_(model, config, options()) {}

  // One generation of n_gen tokens; `counted` false: a warm-up.
  void run(const std::vector<TokenId>& prompt, int64_t n_gen, const SamplingParams& sampling, bool counted) {
    EngineRequest r;
    r.prompt_tokens = prompt;
    r.max_tokens = static_cast<int32_t>(n_gen);
    r.sampling = sampling;
    r.sampling.ignore_eos = true;
    const size_t first_step = static_cast<size_t>(engine_.core().metrics().snapshot(0).num_steps);
    const RequestOutcome out = engine_.run(std::move(r));
    if (out.reason == StopReason::Failed) throw std::runtime_error("bench: " + out.error);
    if (!counted) return;
    const RequestMetrics& m = out.metrics;
    tps_ += static_cast<double>(out.tokens.size() - 1) / (m.e2e_request_latency_seconds - m.time_to_first_token_seconds);
    ++reps_;
    spec_.num_drafts += m.spec.num_drafts;
    spec_.num_draft_tokens += m.spec.num_draft_tokens;
    spec_.num_accepted_tokens += m.spec.num_accepted_tokens;
    const std::vector<StepMetrics> steps = engine_.core().metrics().snapshot(0).steps;
    for (size_t i = first_step; i < steps.size(); ++i) {
      if (steps[i].prefill_tokens > 0) continue;  // the prompt's step
      decode_s_ += steps[i].duration_s;
      ++decode_steps_;
      if (steps[i].spec_draft_tokens == 0) continue;
      draft_s_ += steps[i].draft_seconds;
      verify_s_ += steps[i].verify_seconds;
      ++spec_steps_;
    }
  }

  SweepRow row() const {
    const auto mean = [](double sum, int64_t n) { return n > 0 ? sum / static_cast<double>(n) : 0.0; };
    SweepRow row;
    row.k = k_;
    row.tokens_per_second = mean(tps_, reps_);
    row.step_seconds = mean(decode_s_, decode_steps_);
    row.draft_seconds = mean(draft_s_, spec_steps_);
    row.verify_seconds = mean(verify_s_, spec_steps_);
    row.acceptance_rate = spec_.acceptance_rate();
    row.mean_acceptance_length = spec_.mean_acceptance_length();
    return row;
  }

 private:
  static EngineCoreOptions options() {
    EngineCoreOptions options;
    options.step_window = SIZE_MAX;
    return options;
  }

  int32_t k_;
  SyncEngine engine_;
  double tps_ = 0, decode_s_ = 0, draft_s_ = 0, verify_s_ = 0;
  int64_t reps_ = 0, decode_steps_ = 0, spec_steps_ = 0;
  SpecDecodeCounters spec_;
};

}  // namespace

int spec_sweep(const LlamaModel& model, const EngineConfig& config, const std::vector<TokenId>& prompt, int64_t n_gen,
               const SamplingParams& sampling, int64_t reps, bool only_k, const std::string& output) {
  if (!config.spec.enabled()) throw std::invalid_argument("--spec-sweep needs a proposer: --spec ngram|draft|self-quant|early-exit");
  // Plain decoding first, then each k: k = 1..8 and auto, or only the k that --spec-k names.
  std::vector<EngineConfig> configs(1, config);
  configs[0].spec = SpecConfig{};
  for (int32_t k = 1; k <= 8; ++k) {
    if (only_k && k != config.spec.k) continue;
    configs.push_back(config);
    configs.back().spec.k = k;
  }
  if (!only_k || config.spec.auto_k()) {
    configs.push_back(config);
    configs.back().spec.k = SpecConfig::kAutoK;
  }
  std::vector<std::unique_ptr<SweepRun>> runs;
  for (const EngineConfig& c : configs) runs.push_back(std::make_unique<SweepRun>(model, c));
  // Repetitions go round every configuration in turn, every other one in reverse order, so a drift of
  // the machine's speed and the place in the round touch all alike; repetition 0 warms each up (auto
  // keeps the step costs it measured, as an engine does).
  for (int64_t rep = 0; rep <= reps; ++rep) {
    for (size_t i = 0; i < runs.size(); ++i) runs[rep % 2 == 0 ? i : runs.size() - 1 - i]->run(prompt, n_gen, sampling, rep > 0);
  }
  const SweepRow plain = runs.front()->row();
  std::vector<SweepRow> rows;
  for (size_t i = 1; i < runs.size(); ++i) rows.push_back(runs[i]->row());
  // What a fixed k's acceptance and step times predict (nothing for auto, whose k varies).
  const auto predicted = [&](const SweepRow& r) {
    const double step = r.draft_seconds + r.verify_seconds;
    return step > 0 && r.k != SpecConfig::kAutoK
               ? expected_tokens_per_verify(r.acceptance_rate, r.k) * plain.step_seconds / step
               : 0.0;
  };
  const std::string mode(spec_mode_name(config.spec.mode));
  if (output == "json") {
    nlohmann::json arr = nlohmann::json::array();
    for (const SweepRow& r : rows) {
      arr.push_back({{"spec", mode}, {"k", spec_k_name(r.k)}, {"decode_step_seconds", plain.step_seconds},
                     {"draft_seconds", r.draft_seconds}, {"verify_seconds", r.verify_seconds},
                     {"acceptance_rate", r.acceptance_rate}, {"mean_acceptance_length", r.mean_acceptance_length},
                     {"expected_tokens_per_step", r.k == SpecConfig::kAutoK ? r.mean_acceptance_length
                                                                            : expected_tokens_per_verify(r.acceptance_rate, r.k)},
                     {"predicted_speedup", r.k == SpecConfig::kAutoK ? nlohmann::json() : nlohmann::json(predicted(r))}, {"tokens_per_second", r.tokens_per_second},
                     {"plain_tokens_per_second", plain.tokens_per_second},
                     {"speedup", r.tokens_per_second / plain.tokens_per_second}});
    }
    std::cout << arr.dump(2) << "\n";
    return 0;
  }
  const bool csv = output == "csv";
  std::cout << (csv ? "spec,k,decode_ms,draft_ms,verify_ms,acceptance,mean_acceptance_length,predicted_speedup,tps,speedup\n"
                    : "| spec | k | decode step ms | draft ms | verify k+1 ms | acceptance | mean accepted length | "
                      "predicted speed-up | t/s | speed-up |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  std::cout << (csv ? "none,0," + format_number(plain.step_seconds * 1e3) + ",0,0,0,1,1," + format_number(plain.tokens_per_second, "%.2f") + ",1\n"
                    : "| none | 0 | " + format_number(plain.step_seconds * 1e3) + " | | | | 1 | | " +
                          format_number(plain.tokens_per_second, "%.2f") + " | 1 |\n");
  for (const SweepRow& r : rows) {
    const double speedup = r.tokens_per_second / plain.tokens_per_second;
    if (csv) {
      std::cout << mode << "," << spec_k_name(r.k) << "," << format_number(plain.step_seconds * 1e3) << "," << format_number(r.draft_seconds * 1e3) << ","
                << format_number(r.verify_seconds * 1e3) << "," << format_number(r.acceptance_rate) << "," << format_number(r.mean_acceptance_length)
                << "," << format_number(predicted(r)) << "," << format_number(r.tokens_per_second, "%.2f") << "," << format_number(speedup) << "\n";
    } else {
      std::cout << "| " << mode << " | " << spec_k_name(r.k) << " | " << format_number(plain.step_seconds * 1e3) << " | "
                << format_number(r.draft_seconds * 1e3) << " | " << format_number(r.verify_seconds * 1e3) << " | "
                << format_number(r.acceptance_rate * 100, "%.1f%%") << " | " << format_number(r.mean_acceptance_length, "%.2f") << " | "
                << (r.k == SpecConfig::kAutoK ? std::string() : format_number(predicted(r), "%.2f") + "×") << " | " << format_number(r.tokens_per_second, "%.2f") << " | "
                << format_number(speedup, "%.2f") << "× |\n";
    }
  }
  return 0;
}

}  // namespace inferscope::cli
