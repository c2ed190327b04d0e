#include "core/executor/model_executor.h"

#include <algorithm>
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
      forward_(options.forward_maker(model, options.weights ? *options.weights : model.weights(), options.forward,
                                     options.device)) {}

ModelExecutor::~ModelExecutor() = default;

void ModelExecutor::set_sampling(RequestId id, const SamplingParams& params) {
  samplers_.insert_or_assign(id, Sampler(params));
}

void ModelExecutor::set_logits_output(RequestId id, WantedLogits wanted) {
  if (wanted.output == LogitsOutput::None) {
    logits_outputs_.erase(id);
  } else {
    logits_outputs_.insert_or_assign(id, wanted);
  }
}

void ModelExecutor::set_weights(const LlamaWeights& weights) {
  forward_.reset();  // on a device its weights are freed before the new ones are uploaded
  forward_ = options_.forward_maker(model_, weights, options_.forward, options_.device);
}

void ModelExecutor::set_forward(std::unique_ptr<ForwardPass> forward, const ComputeDevice& device) {
  forward_ = std::move(forward);
  options_.device = device;  // later weights are built for it
}

void ModelExecutor::set_attention(const std::string& name) {
  if (name != attention_->name()) attention_ = make_attention(name);
}

void ModelExecutor::forget(RequestId id) {
  samplers_.erase(id);
  logits_outputs_.erase(id);
}

Sampler& ModelExecutor::sampler_for(RequestId id) { return samplers_.try_emplace(id, options_.sampling).first->second; }

double ModelExecutor::draft(const StepPlan& plan) {
  draft_requests_.clear();
  draft_of_.assign(plan.seqs.size(), -1);
  shadow_of_.assign(plan.seqs.size(), -1);
  if (!proposer_) return 0;
  const bool shadows = proposer_->drafts_cost_nothing();
  for (size_t i = 0; i < plan.seqs.size(); ++i) {
    const ScheduledSeq& s = plan.seqs[i];
    if (s.draft_slots > 0) {
      draft_of_[i] = static_cast<int32_t>(draft_requests_.size());
    } else if (s.shadow_draft && shadows) {
      shadow_of_[i] = static_cast<int32_t>(draft_requests_.size());
    } else {
      continue;
    }
    draft_requests_.push_back(DraftRequest{s.id, s.history, std::max(s.draft_slots, 1), &sampler_for(s.id)});
  }
  if (draft_requests_.empty()) return 0;
  const auto start = std::chrono::steady_clock::now();
  proposer_->propose(draft_requests_, ProposeContext{*kv_, *pool_, *attention_}, drafts_);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // A draft never runs past the slots the scheduler gave it.
  for (size_t d = 0; d < drafts_.size(); ++d) {
    Draft& draft = drafts_[d];
    const size_t max = static_cast<size_t>(draft_requests_[d].max_tokens);
    if (draft.tokens.size() > max) draft.tokens.resize(max);
    if (draft.q.size() > draft.tokens.size()) draft.q.resize(draft.tokens.size());
  }
  return seconds;
}

StepResult ModelExecutor::execute(const StepPlan& plan) {
  const auto start = std::chrono::steady_clock::now();
  const int64_t dispatches = pool_->dispatches();
  StepResult result;
  result.spec.draft_seconds = draft(plan);
  // One pass over every sequence's new tokens; a speculating decode feeds its token and its drafts,
  // with logits at each, so the verifier can judge every draft.
  batch_.clear();
  feeds_.resize(plan.seqs.size());
  for (size_t i = 0; i < plan.seqs.size(); ++i) {
    const ScheduledSeq& s = plan.seqs[i];
    if (draft_of_[i] >= 0) {
      const std::vector<TokenId>& d = drafts_[static_cast<size_t>(draft_of_[i])].tokens;
      feeds_[i].assign(1, s.history.back());
      feeds_[i].insert(feeds_[i].end(), d.begin(), d.end());
      batch_.push_back(BatchSeq{s.id, feeds_[i], s.pos0(), static_cast<int64_t>(feeds_[i].size())});
      continue;
    }
    const WantedLogits wanted = wanted_logits(s.id);
    const int32_t end = s.pos0() + static_cast<int32_t>(s.new_tokens().size());
    // An All request's rows from its first wanted position on; the last row is always computed.
    const int64_t rows = wanted.output == LogitsOutput::All ? end - std::max(s.pos0(), wanted.from) : 1;
    batch_.push_back(BatchSeq{s.id, s.new_tokens(), s.pos0(), rows});
  }
  const auto verify_start = std::chrono::steady_clock::now();
  result.forward = forward_->run(batch_, *kv_, *attention_, *pool_, logits_);
  if (std::any_of(draft_of_.begin(), draft_of_.end(), [](int32_t d) { return d >= 0; })) {
    result.spec.verify_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - verify_start).count();
  }

  // Logits rows in plan order: every fed position of a speculating sequence, the wanted ones of an
  // All sequence, the last of the others.
  const size_t vocab = static_cast<size_t>(model_.config().vocab_size);
  std::vector<SampledToken>& sampled = result.sampled;
  size_t row = 0;
  for (size_t i = 0; i < plan.seqs.size(); ++i) {
    const BatchSeq& b = batch_[i];
    const auto first = static_cast<int32_t>(first_logits_token(b));
    const size_t rows = b.tokens.size() - static_cast<size_t>(first);
    sampled.push_back(pick(plan.seqs[i], i, std::span<const float>(logits_).subspan(row * vocab, rows * vocab), first,
                           wanted_logits(b.seq)));
    if (shadow_of_[i] >= 0) {
      const std::vector<TokenId>& shadow = drafts_[static_cast<size_t>(shadow_of_[i])].tokens;
      if (!shadow.empty()) sampled.back().shadow = shadow.front();
    }
    row += rows;
  }
  result.pool_dispatches = pool_->dispatches() - dispatches;
  result.device_memory = forward_->device_memory();  // the device's scratch follows the batch
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

WantedLogits ModelExecutor::wanted_logits(RequestId id) const {
  const auto wanted = logits_outputs_.find(id);
  return wanted == logits_outputs_.end() ? WantedLogits{} : wanted->second;
}

SampledToken ModelExecutor::pick(const ScheduledSeq& s, size_t index, std::span<const float> rows, int32_t first_row,
                                 WantedLogits wanted) {
  const LogitsOutput output = wanted.output;
  const size_t vocab = static_cast<size_t>(model_.config().vocab_size);
  const int32_t n_rows = static_cast<int32_t>(rows.size() / vocab);
  const auto row = [&](int32_t r) { return rows.subspan(static_cast<size_t>(r) * vocab, vocab); };
  if (output == LogitsOutput::All) {
    for (int32_t r = 0; r < n_rows; ++r) {
      const int32_t position = s.pos0() + first_row + r;
      if (position >= wanted.from) options_.on_logits(s.id, position, row(r));
    }
  }
  if (!s.sample) return SampledToken{};  // a prefill chunk: its logits are not sampled
  Sampler& sampler = sampler_for(s.id);
  const bool stop_at_eog = !sampler.params().ignore_eos;
  const Vocab& vocabulary = model_.tokenizer().vocab();
  try {
    if (draft_of_[index] < 0) {
      const std::span<const float> last = row(n_rows - 1);
      if (output == LogitsOutput::Sampled) options_.on_logits(s.id, s.pos0() + s.n_new - 1, last);
      const TokenId next = sampler.sample(last, s.history);
      if (stop_at_eog && vocabulary.is_eog(next)) return SampledToken{{}, true, {}};
      return SampledToken{{next}, false, {}};
    }
    const Draft& draft = drafts_[static_cast<size_t>(draft_of_[index])];
    const Verification v = verify_draft(rows, vocab, draft, sampler, s.history);
    SampledToken out;
    out.drafted = static_cast<int32_t>(draft.tokens.size());
    out.verification = v;
    // Emitted token j was picked from row j; an end-of-generation token ends the output there.
    for (size_t j = 0; j < v.emitted.size(); ++j) {
      if (output == LogitsOutput::Sampled) options_.on_logits(s.id, s.pos0() + static_cast<int32_t>(j), row(static_cast<int32_t>(j)));
      const TokenId id = v.emitted[j].id;
      if (stop_at_eog && vocabulary.is_eog(id)) {
        out.end_of_generation = true;
        break;
      }
      out.tokens.push_back(id);
    }
    return out;
  } catch (const std::exception& e) {
    // This request's logits cannot be sampled (all NaN or -inf): it alone ends, with the reason.
    return SampledToken{{}, false, e.what()};
  }
}

}  // namespace inferscope
