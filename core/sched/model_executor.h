// Runs a scheduled step on the real model: one batched forward pass for every scheduled sequence,
// then each request's own sampler picks its next token. Timed on the wall clock.
#pragma once
#include <map>
#include <memory>
#include <string>

#include "core/attention/attention.h"
#include "core/model/llama_forward.h"
#include "core/sample/sampler.h"
#include "core/sched/step_executor.h"

namespace inferscope {

class LlamaModel;
class ThreadPool;

struct ModelExecutorOptions {
  int32_t threads = 0;          // 0 = every hardware thread
  MatmulOptions matmul;
  std::string attention = "flash";  // "flash" or "naive"
  SamplingParams sampling;      // the sampler of a request without its own (greedy by default)
  bool stop_at_eog = false;     // end a request at an end-of-generation token (else run to output_tokens)
};

class ModelExecutor final : public StepExecutor {
 public:
  ModelExecutor(const LlamaModel& model, KvCache& kv, const ModelExecutorOptions& options);
  ~ModelExecutor() override;
  double execute(const StepPlan& plan, std::vector<SampledToken>& sampled) override;
  void forget(RequestId id) override { samplers_.erase(id); }
  // Gives `id` its own sampler (before its first step).
  void set_sampling(RequestId id, const SamplingParams& params) { samplers_.insert_or_assign(id, Sampler(params)); }
  // Runs later steps on another cache (the engine replaced it between steps).
  void rebind(KvCache& kv) { kv_ = &kv; }
  // Runs later steps with another attention implementation ("flash" or "naive").
  void set_attention(const std::string& name);
  // What the last step's attention needed: scratch bytes at its peak, and seconds over all layers.
  size_t last_attention_scratch_bytes() const { return forward_.last_attention_scratch_bytes(); }
  double last_attention_seconds() const { return forward_.last_attention_seconds(); }

 private:
  const LlamaModel& model_;
  KvCache* kv_;
  ModelExecutorOptions options_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<Attention> attention_;
  LlamaForward forward_;
  std::map<RequestId, Sampler> samplers_;
  std::vector<BatchSeq> batch_;
  std::vector<float> logits_;
};

}  // namespace inferscope
