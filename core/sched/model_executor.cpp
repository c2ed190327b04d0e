#include "core/sched/model_executor.h"

#include <chrono>

#include "core/attention/attention_factory.h"
#include "core/model/llama_model.h"
#include "kernels/cpu/thread_pool.h"

namespace inferscope {

ModelExecutor::ModelExecutor(const LlamaModel& model, KvCache& kv, const ModelExecutorOptions& options)
    : model_(model),
      kv_(&kv),
      options_(options),
      pool_(std::make_unique<ThreadPool>(options.threads)),
      attention_(make_attention(options.attention)),
      forward_(std::make_unique<LlamaForward>(model, options.weights ? *options.weights : model.weights(),
                                              options.matmul)) {}

ModelExecutor::~ModelExecutor() = default;

void ModelExecutor::set_sampling(RequestId id, const SamplingParams& params) {
  samplers_.insert_or_assign(id, Sampler(params));
}

void ModelExecutor::set_weights(const LlamaWeights& weights) {
  forward_ = std::make_unique<LlamaForward>(model_, weights, options_.matmul);
}

void ModelExecutor::set_attention(const std::string& name) {
  if (name != attention_->name()) attention_ = make_attention(name);
}

double ModelExecutor::execute(const StepPlan& plan, std::vector<SampledToken>& sampled) {
  const auto start = std::chrono::steady_clock::now();
  batch_.clear();
  for (const ScheduledSeq& s : plan.seqs) batch_.push_back(BatchSeq{s.id, s.new_tokens(), s.pos0(), false});
  forward_->run(batch_, *kv_, *attention_, *pool_, logits_);

  // One row of logits per sequence (its last position), in plan order.
  const size_t vocab = static_cast<size_t>(model_.config().vocab_size);
  sampled.clear();
  for (size_t i = 0; i < plan.seqs.size(); ++i) {
    const ScheduledSeq& s = plan.seqs[i];
    if (!s.sample) {
      sampled.push_back(SampledToken{});  // a prefill chunk: its logits are not used
      continue;
    }
    Sampler& sampler = samplers_.try_emplace(s.id, options_.sampling).first->second;
    const TokenId next = sampler.sample(std::span(logits_).subspan(i * vocab, vocab), s.history);
    const bool eog = !sampler.params().ignore_eos && model_.tokenizer().vocab().is_eog(next);
    sampled.push_back(SampledToken{next, eog});
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace inferscope
