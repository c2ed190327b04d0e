// Runs a whole workload through a fresh engine core: requests join at their arrival times (the wall
// clock, or the dry run's virtual clock), and the run returns the full metrics timeline, its
// summary and every request's output. serve-sim, the GUI's A/B comparison and tests use it.
#pragma once
#include <atomic>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/engine/engine_config.h"
#include "core/engine/engine_metrics.h"
#include "core/workload/serve_summary.h"
#include "core/sample/sampler.h"
#include "core/servesim/dry_run_executor.h"
#include "core/sched/request.h"
#include "core/spec/verifier.h"

namespace inferscope {

class EngineCore;
class LlamaModel;

struct WorkloadRunOptions {
  SamplingParams sampling;           // every request's (ignore_eos: run each to its output_tokens)
  std::optional<DryRunPricing> dry_run;   // set: no forward pass, modelled step costs on a virtual clock
  // Called after every step on the running thread: requests ended so far, and their total.
  std::function<void(int32_t done, int32_t total)> on_progress;
  const std::atomic<bool>* cancel = nullptr;  // set to true: the requests left are aborted and the run returns
  // Called after every step on the running thread, with the core between steps (its cache, its metrics).
  std::function<void(const EngineCore& core)> after_step;
  bool keep_logits = false;  // every generated token's raw logits in WorkloadOutput::logits
};

// One on_token call: a generated token and the text it completed (token -1: text held back until the end).
struct StreamedPiece {
  TokenId token = -1;
  std::string piece;
};

// A verified speculative step (EngineCallbacks::on_verify), before the pieces it explains stream.
struct StreamedVerification {
  size_t before_piece = 0;  // how many pieces had streamed before it
  Verification verification;
};

struct WorkloadOutput {
  RequestId id = 0;
  std::vector<TokenId> tokens;  // generated ids, in order
  std::string text;             // the streamed text (stop strings removed)
  std::string finish_reason;    // "stop" | "length" | "abort" | "error"
  std::string error;            // why it failed, when it did
  std::vector<StreamedPiece> pieces;               // every streamed token, in order (the chat's per-token view)
  std::vector<StreamedVerification> verifications;  // every verified speculative step
  // keep_logits: row i (vocab floats) is the raw logits that chose generated token i.
  std::vector<float> logits;
};

// The largest |a - b| over the logits two runs of one request computed from the same inputs: the
// rows of every generated token up to and including the first that differs (their inputs are equal).
// 0 when either run kept no logits.
double max_logit_difference(const WorkloadOutput& a, const WorkloadOutput& b, size_t vocab);

// The index of the first token where `a` and `b` differ; when one is a prefix of the other, the
// shorter one's length; -1 when they are identical (two runs' outputs of one request).
int first_divergence(std::span<const TokenId> a, std::span<const TokenId> b);

struct WorkloadResult {
  EngineConfig config;           // resolved
  double duration_s = 0;
  ServeSummary summary;
  EngineMetricsSnapshot metrics;       // every step and every request
  std::vector<WorkloadOutput> outputs;  // by request id
  std::string simulated_on;  // a dry run: the device its steps were priced on; empty for a real run
  std::string server_metrics_error;  // a server's run: why its /metrics gave nothing ("" when it answered)
};

// `requests`: as materialize_workload() makes them (prompt ids, max_output_tokens, arrival_s; ids
// unique). Throws std::invalid_argument for a bad config.
WorkloadResult run_workload(const LlamaModel& model, const EngineConfig& config, const std::vector<Request>& requests,
                            const WorkloadRunOptions& options = {});

// The summary, every request's metrics with its output and error, and (with_steps) every step as
// "step_timeline". The figures the run did not measure (figure_unmeasured: a server's) are null and
// listed under "unavailable", and a server's requests have null queue times, preemptions and drafts.
nlohmann::json workload_json(const WorkloadResult& result, bool with_steps);

}  // namespace inferscope
