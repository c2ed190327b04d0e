// Runs a scheduled step: computes the plan's new tokens and picks each sequence's next token.
// The real model (ModelExecutor) and serve-sim's dry run (DryRunExecutor) are the two executors.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/model/forward_pass.h"
#include "core/model/llama_weights.h"
#include "core/model/compute_device.h"
#include "core/sample/sampler.h"
#include "core/sched/scheduler.h"

namespace inferscope {

// Which of a request's raw logits (the model's, before any sampling step) the executor hands out.
enum class LogitsOutput {
  None,
  Sampled,  // the row each output token is sampled from (generate --logprobs)
  All,      // every computed position from a given one on, prompt included (perplexity, exactness checks)
};

// The logits a request asked for: with All, positions `from` onwards (earlier ones are never computed).
struct WantedLogits {
  LogitsOutput output = LogitsOutput::None;
  int32_t from = 0;
};

// Receives logits row `position` of request `id` (it predicts the token after `position`); the
// span is valid during the call only. A position recomputed after a preemption comes again, equal.
using LogitsFn = std::function<void(RequestId id, int32_t position, std::span<const float> logits)>;

// Where a speculating step's time went: drafting, and the forward pass that scored the drafts (0
// when no sequence drafted).
struct SpecUse {
  double draft_seconds = 0;
  double verify_seconds = 0;
};

// What one step did and measured.
struct StepResult {
  std::vector<SampledToken> sampled;  // one per plan sequence, in plan order
  double seconds = 0;                 // the step's duration (measured, or modelled on a virtual clock)
  ForwardStats forward;               // the forward pass's attention and matmul figures (none without a model)
  SpecUse spec;
  int64_t pool_dispatches = 0;        // thread-pool dispatches (each a wake-up and a join of the workers)
  std::optional<DeviceMemory> device_memory;  // what the forward pass holds on its device after the step
};

class Proposer;

class StepExecutor {
 public:
  virtual ~StepExecutor() = default;
  // Runs `plan`, for which the cache already holds room for every new token. Throws when the step
  // fails; its sequences then hold slots never written (KvCache::discard them).
  virtual StepResult execute(const StepPlan& plan) = 0;
  // Gives `id` its own sampling parameters (before its first step); executors that do not sample ignore them.
  virtual void set_sampling(RequestId /*id*/, const SamplingParams& /*params*/) {}
  // Hands out `id`'s logits as `wanted` says (before its first step); executors without a model ignore it.
  virtual void set_logits_output(RequestId /*id*/, WantedLogits /*wanted*/) {}
  // The request has left for good: drop anything kept for it (its sampler).
  virtual void forget(RequestId /*id*/) {}
  // Runs later steps on another cache (the engine replaced it between steps).
  virtual void rebind(KvCache& /*kv*/) {}
  // Runs later steps with another attention implementation ("flash" or "naive").
  virtual void set_attention(const std::string& /*name*/) {}
  // Runs later steps on other weights (another quantization level), which must outlive their use.
  // The forward pass over the old ones goes first, so a device never holds both; when the new one
  // cannot be built (throws), there is none until set_weights or set_forward succeeds.
  virtual void set_weights(const LlamaWeights& /*weights*/) {}
  // Runs later steps with `forward`, a forward pass on `device` over the weights in use (the engine
  // moved to another device between steps; it rebuilds the cache). Executors without a model ignore it.
  virtual void set_forward(std::unique_ptr<ForwardPass> /*forward*/, const ComputeDevice& /*device*/) {}
  // What the forward pass holds on its device now; nullopt on the CPU or without a model.
  virtual std::optional<DeviceMemory> device_memory() const { return std::nullopt; }
  // Drafts for the speculating decodes of later steps come from `proposer` (null: none; it must
  // outlive its use). Executors without a model ignore it.
  virtual void set_proposer(Proposer* /*proposer*/) {}
};

}  // namespace inferscope
