// Runs a scheduled step on the real model: one batched forward pass for every scheduled sequence,
// then each request's own sampler picks its next token. Timed on the wall clock.
#pragma once
#include <map>
#include <memory>
#include <string>

#include "core/attention/attention.h"
#include "core/model/forward_pass.h"
#include "core/model/compute_device.h"
#include "core/executor/forward_factory.h"
#include "core/sample/sampler.h"
#include "core/executor/step_executor.h"
#include "core/spec/proposer.h"

namespace inferscope {

class LlamaModel;
class ThreadPool;

struct ModelExecutorOptions {
  int32_t threads = 0;          // 0 = every hardware thread
  ForwardOptions forward;
  std::string attention = "flash";  // "flash" or "naive"
  ComputeDevice device;         // where the forward pass runs (set_forward moves it)
  ForwardMaker forward_maker = inferscope::make_forward;  // builds the forward pass (tests give their own)
  const LlamaWeights* weights = nullptr;  // what the matmuls read (another quantization level); null: the model's own
  SamplingParams sampling;      // the sampler of a request without its own (greedy by default)
  LogitsFn on_logits;           // receives the logits that requests ask for (set_logits_output)
};

class ModelExecutor final : public StepExecutor {
 public:
  ModelExecutor(const LlamaModel& model, KvCache& kv, const ModelExecutorOptions& options);
  ~ModelExecutor() override;
  StepResult execute(const StepPlan& plan) override;
  void set_sampling(RequestId id, const SamplingParams& params) override;
  void set_logits_output(RequestId id, WantedLogits wanted) override;
  void forget(RequestId id) override;
  void rebind(KvCache& kv) override { kv_ = &kv; }
  void set_attention(const std::string& name) override;
  // Runs later steps on other weights (the model's at another quantization level; they must outlive
  // their use). The KV cache holds K/V of the old weights: the caller rebuilds it.
  void set_weights(const LlamaWeights& weights) override;
  void set_forward(std::unique_ptr<ForwardPass> forward, const ComputeDevice& device) override;
  std::optional<DeviceMemory> device_memory() const override { return forward_->device_memory(); }
  void set_proposer(Proposer* proposer) override { proposer_ = proposer; }

 private:
  const LlamaModel& model_;
  KvCache* kv_;
  ModelExecutorOptions options_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<Attention> attention_;
  std::unique_ptr<ForwardPass> forward_;
  Sampler& sampler_for(RequestId id);
  WantedLogits wanted_logits(RequestId id) const;
  // Asks the proposer for the drafts of the plan's speculating decodes (draft_of_ indexes drafts_),
  // and for a one-token shadow draft of those without slots when drafts cost nothing (shadow_of_);
  // returns the seconds it took (0 when none drafted).
  double draft(const StepPlan& plan);
  // Turns sequence `s`'s logits rows into its sampled token(s), handing out the logits it asked for.
  // `rows` are the logits of its new tokens from `first_row` on.
  SampledToken pick(const ScheduledSeq& s, size_t index, std::span<const float> rows, int32_t first_row,
                    WantedLogits wanted);

  Proposer* proposer_ = nullptr;
  std::vector<DraftRequest> draft_requests_;
  std::vector<Draft> drafts_;
  std::vector<int32_t> draft_of_;             // per plan sequence: its index in drafts_, or -1
  std::vector<int32_t> shadow_of_;            // per plan sequence: its unscored draft's index in drafts_, or -1
  std::vector<std::vector<TokenId>> feeds_;   // speculating sequences: the known token, then the drafts
  std::map<RequestId, Sampler> samplers_;
  std::map<RequestId, WantedLogits> logits_outputs_;  // requests that asked for logits
  std::vector<BatchSeq> batch_;
  std::vector<float> logits_;
};

}  // namespace inferscope
