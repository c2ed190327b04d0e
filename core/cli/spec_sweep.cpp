#include "core/cli/spec_sweep.h"

#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/common/text_format.h"
#include "core/engine/sync_engine.h"

namespace inferscope::cli {
namespace {

// One configuration's run, averaged over its repetitions.
struct SweepRow {
  int32_t k = 0;                  // 0: no speculation
  double tokens_per_second = 0;   // output tokens after the first over the decode time
  double step_seconds = 0;        // mean decode step (speculative: draft + verify)
  double draft_seconds = 0;       // mean per speculative step
  double verify_seconds = 0;      // mean per speculative step
  double acceptance_rate = 0;
  double mean_acceptance_length = 1;
};

SweepRow measure(const LlamaModel& model, EngineConfig config, const std::vector<TokenId>& prompt, int64_t n_gen,
                 const SamplingParams& sampling, int64_t reps) {
  SweepRow row;
  row.k = config.spec.enabled() ? config.spec.k : 0;
  EngineCoreOptions options;
  options.step_window = SIZE_MAX;
  SyncEngine engine(model, config, options);
  double tps = 0, decode_s = 0, draft_s = 0, verify_s = 0;
  int64_t decode_steps = 0, spec_steps = 0;
  SpecDecodeCounters spec;
  for (int64_t rep = 0; rep <= reps; ++rep) {  // repetition 0 warms up
    EngineRequest r;
    r.prompt_tokens = prompt;
    r.max_tokens = static_cast<int32_t>(n_gen);
    r.sampling = sampling;
    r.sampling.ignore_eos = true;
    const size_t first_step = static_cast<size_t>(engine.core().metrics().snapshot(0).num_steps);
    const RequestOutcome out = engine.run(std::move(r));
    if (out.reason == StopReason::Failed) throw std::runtime_error("bench: " + out.error);
    if (rep == 0) continue;
    const RequestMetrics& m = out.metrics;
    tps += static_cast<double>(out.tokens.size() - 1) / (m.e2e_request_latency_seconds - m.time_to_first_token_seconds);
    spec.num_drafts += m.spec.num_drafts;
    spec.num_draft_tokens += m.spec.num_draft_tokens;
    spec.num_accepted_tokens += m.spec.num_accepted_tokens;
    const std::vector<StepMetrics> steps = engine.core().metrics().snapshot(0).steps;
    for (size_t i = first_step; i < steps.size(); ++i) {
      if (steps[i].prefill_tokens > 0) continue;  // the prompt's step
      decode_s += steps[i].duration_s;
      ++decode_steps;
      if (steps[i].spec_draft_tokens == 0) continue;
      draft_s += steps[i].draft_seconds;
      verify_s += steps[i].verify_seconds;
      ++spec_steps;
    }
  }
  row.tokens_per_second = tps / static_cast<double>(reps);
  row.step_seconds = decode_steps > 0 ? decode_s / static_cast<double>(decode_steps) : 0;
  row.draft_seconds = spec_steps > 0 ? draft_s / static_cast<double>(spec_steps) : 0;
  row.verify_seconds = spec_steps > 0 ? verify_s / static_cast<double>(spec_steps) : 0;
  row.acceptance_rate = spec.acceptance_rate();
  row.mean_acceptance_length = spec.mean_acceptance_length();
  return row;
}

// Tokens per step when each of k drafts is accepted with probability a independently (Leviathan et
// al.): 1 + a + ... + a^k = (1 - a^(k+1)) / (1 - a).
double expected_tokens_per_step(double a, int32_t k) {
  if (a >= 1.0) return k + 1.0;
  return (1.0 - std::pow(a, k + 1)) / (1.0 - a);
}

}  // namespace

int spec_sweep(const LlamaModel& model, const EngineConfig& config, const std::vector<TokenId>& prompt, int64_t n_gen,
               const SamplingParams& sampling, int64_t reps, const std::string& output) {
  if (!config.spec.enabled()) throw std::invalid_argument("--spec-sweep needs a proposer: --spec ngram|draft|self-quant|early-exit");
  EngineConfig plain_config = config;
  plain_config.spec = SpecConfig{};
  const SweepRow plain = measure(model, plain_config, prompt, n_gen, sampling, reps);
  std::vector<SweepRow> rows;
  for (int32_t k = 1; k <= 8; ++k) {
    EngineConfig c = config;
    c.spec.k = k;
    rows.push_back(measure(model, c, prompt, n_gen, sampling, reps));
  }
  const auto predicted = [&](const SweepRow& r) {
    const double step = r.draft_seconds + r.verify_seconds;
    return step > 0 ? expected_tokens_per_step(r.acceptance_rate, r.k) * plain.step_seconds / step : 0.0;
  };
  const std::string mode(spec_mode_name(config.spec.mode));
  if (output == "json") {
    nlohmann::json arr = nlohmann::json::array();
    for (const SweepRow& r : rows) {
      arr.push_back({{"spec", mode}, {"k", r.k}, {"decode_step_seconds", plain.step_seconds},
                     {"draft_seconds", r.draft_seconds}, {"verify_seconds", r.verify_seconds},
                     {"acceptance_rate", r.acceptance_rate}, {"mean_acceptance_length", r.mean_acceptance_length},
                     {"expected_tokens_per_step", expected_tokens_per_step(r.acceptance_rate, r.k)},
                     {"predicted_speedup", predicted(r)}, {"tokens_per_second", r.tokens_per_second},
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
      std::cout << mode << "," << r.k << "," << format_number(plain.step_seconds * 1e3) << "," << format_number(r.draft_seconds * 1e3) << ","
                << format_number(r.verify_seconds * 1e3) << "," << format_number(r.acceptance_rate) << "," << format_number(r.mean_acceptance_length)
                << "," << format_number(predicted(r)) << "," << format_number(r.tokens_per_second, "%.2f") << "," << format_number(speedup) << "\n";
    } else {
      std::cout << "| " << mode << " | " << r.k << " | " << format_number(plain.step_seconds * 1e3) << " | "
                << format_number(r.draft_seconds * 1e3) << " | " << format_number(r.verify_seconds * 1e3) << " | "
                << format_number(r.acceptance_rate * 100, "%.1f%%") << " | " << format_number(r.mean_acceptance_length, "%.2f") << " | "
                << format_number(predicted(r), "%.2f") << "× | " << format_number(r.tokens_per_second, "%.2f") << " | "
                << format_number(speedup, "%.2f") << "× |\n";
    }
  }
  return 0;
}

}  // namespace inferscope::cli
