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

void ModelExecutor::set_logits_output(RequestId id, LogitsOutput output) {
  if (output == LogitsOutput::None) {
    logits_outputs_.erase(id);
  } else {
    logits_outputs_.insert_or_assign(id, output);
  }
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
  for (const ScheduledSeq& s : plan.seqs) {
    const auto wanted = logits_outputs_.find(s.id);
    const bool all = wanted != logits_outputs_.end() && wanted->second == LogitsOutput::All;
    batch_.push_back(BatchSeq{s.id, s.new_tokens(), s.pos0(), all});
  }
  forward_->run(batch_, *kv_, *attention_, *pool_, logits_);

  // Logits rows in plan order: every new position of an All sequence, the last of the others.
  const size_t vocab = static_cast<size_t>(model_.config().vocab_size);
  sampled.clear();
  size_t row = 0;
  for (size_t i = 0; i < plan.seqs.size(); ++i) {
    const ScheduledSeq& s = plan.seqs[i];
    const auto wanted = logits_outputs_.find(s.id);
    const LogitsOutput output = wanted == logits_outputs_.end() ? LogitsOutput::None : wanted->second;
    const int32_t rows = output == LogitsOutput::All ? s.n_new : 1;
    for (int32_t r = 0; r < rows && output == LogitsOutput::All; ++r) {
      options_.on_logits(s.id, s.pos0() + r, std::span(logits_).subspan((row + r) * vocab, vocab));
    }
    const std::span<const float> last = std::span(logits_).subspan((row + rows - 1) * vocab, vocab);
    row += static_cast<size_t>(rows);
    if (!s.sample) {
      sampled.push_back(SampledToken{});  // a prefill chunk: its logits are not sampled
      continue;
    }
    if (output == LogitsOutput::Sampled) options_.on_logits(s.id, s.pos0() + s.n_new - 1, last);
    Sampler& sampler = samplers_.try_emplace(s.id, options_.sampling).first->second;
    try {
      const TokenId next = sampler.sample(last, s.history);
      const bool eog = !sampler.params().ignore_eos && model_.tokenizer().vocab().is_eog(next);
      sampled.push_back(SampledToken{next, eog, {}});
    } catch (const std::exception& e) {
      // This request's logits cannot be sampled (all NaN or -inf): it alone ends, with the reason.
      sampled.push_back(SampledToken{0, false, e.what()});
    }
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace inferscope
