#include "core/spec/model_draft_proposer.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/attention/attention.h"

namespace inferscope {
namespace {

// The largest softmax probability of a row of logits (temperature 1): the draft's confidence.
float top_probability(std::span<const float> row) {
  float max_logit = -INFINITY;
  for (float l : row) max_logit = std::max(max_logit, l);
  if (!std::isfinite(max_logit)) return 0.0f;
  double sum = 0.0;
  for (float l : row) sum += std::exp(static_cast<double>(l) - max_logit);
  return static_cast<float>(1.0 / sum);
}

}  // namespace

ModelDraftProposer::ModelDraftProposer(const LlamaModel& model, std::unique_ptr<ForwardPass> forward,
                                       std::unique_ptr<KvCache> kv, ModelDraftOptions options)
    : model_(model), options_(std::move(options)), kv_(std::move(kv)), forward_(std::move(forward)) {}

ModelDraftProposer::~ModelDraftProposer() = default;

void ModelDraftProposer::own(std::unique_ptr<LlamaModel> model, std::unique_ptr<ConvertedWeights> weights) {
  owned_model_ = std::move(model);
  owned_weights_ = std::move(weights);
}

void ModelDraftProposer::on_removed(RequestId id, std::span<const TokenId> /*tokens*/, bool /*preempted*/) {
  if (kv_) kv_->free(id);
  fed_.erase(id);
}

int32_t ModelDraftProposer::catch_up(const DraftRequest& r) {
  std::vector<TokenId>& fed = fed_[r.id];
  const int32_t h = static_cast<int32_t>(r.history.size());
  // What the draft fed and the sequence still holds (accepted drafts included) stays; at least the
  // last token is fed again, for the logits of the first draft.
  const auto diverge = std::mismatch(fed.begin(), fed.end(), r.history.begin(), r.history.end()).first;
  const int32_t keep = std::min(static_cast<int32_t>(diverge - fed.begin()), h - 1);
  if (keep < kv_->length(r.id)) kv_->truncate(r.id, keep);
  fed.resize(static_cast<size_t>(keep));
  if (!kv_->allocate(r.id, h - keep)) return -1;
  fed.insert(fed.end(), r.history.begin() + keep, r.history.end());
  return keep;
}

void ModelDraftProposer::propose(std::span<const DraftRequest> requests, const ProposeContext& context,
                                 std::vector<Draft>& drafts) {
  drafts.assign(requests.size(), Draft{});
  KvCache& kv = kv_ ? *kv_ : context.target_kv;
  const size_t vocab = static_cast<size_t>(model_.config().vocab_size);
  // Each request's context for its sampler (history, then its drafts so far) and its next feed.
  std::vector<std::vector<TokenId>> ctx(requests.size());
  std::vector<int32_t> pos(requests.size(), 0);
  std::vector<size_t> active;
  feeds_.assign(requests.size(), {});
  for (size_t i = 0; i < requests.size(); ++i) {
    const DraftRequest& r = requests[i];
    if (r.max_tokens <= 0 || r.history.empty()) continue;
    // Own cache: catch up on what the sequence accepted; target cache: its last token, whose slot
    // the scheduler allocated with the draft slots (early exit).
    const int32_t start = kv_ ? catch_up(r) : static_cast<int32_t>(r.history.size()) - 1;
    if (start < 0) continue;  // the draft cache is full: no draft this step
    ctx[i].assign(r.history.begin(), r.history.end());
    feeds_[i].assign(r.history.begin() + start, r.history.end());
    pos[i] = start;
    active.push_back(i);
  }
  while (!active.empty()) {
    batch_.clear();
    for (size_t i : active) batch_.push_back(BatchSeq{requests[i].id, feeds_[i], pos[i]});
    forward_->run(batch_, kv, context.attention, context.pool, logits_, options_.layers);
    std::vector<size_t> next;
    for (size_t b = 0; b < active.size(); ++b) {
      const size_t i = active[b];
      const DraftRequest& r = requests[i];
      const std::span<const float> row = std::span<const float>(logits_).subspan(b * vocab, vocab);
      Sampler& sampler = *r.sampler;
      Draft& d = drafts[i];
      TokenId x = 0;
      try {
        // q: the request's own chain on the draft's logits; greedy drafts are one-hot.
        const TokenProbs& q = sampler.distribution(row, ctx[i]);
        const float confidence = sampler.greedy() ? top_probability(row) : q.front().second;
        if (confidence < options_.p_min) continue;  // llama.cpp's rule: an unsure draft stops here
        if (sampler.greedy()) {
          x = q.front().first;
        } else {
          x = Sampler::draw(q, sampler.uniform());
          d.q.push_back(q);
        }
      } catch (const std::runtime_error&) {
        continue;  // a draft row with no finite logit: this sequence drafts no further
      }
      d.tokens.push_back(x);
      ctx[i].push_back(x);
      if (static_cast<int32_t>(d.tokens.size()) >= r.max_tokens) continue;
      // The next round feeds x; an own cache needs its slot first.
      pos[i] += static_cast<int32_t>(feeds_[i].size());
      if (kv_) {
        if (!kv_->allocate(r.id, 1)) continue;
        fed_[r.id].push_back(x);
      }
      feeds_[i].assign(1, x);
      next.push_back(i);
    }
    active = std::move(next);
  }
}

void check_same_vocabulary(const LlamaModel& target, const LlamaModel& draft, const std::string& draft_path) {
  const Vocab& a = target.tokenizer().vocab();
  const Vocab& b = draft.tokenizer().vocab();
  const int32_t n = std::min(a.size(), b.size());
  for (int32_t id = 0; id < n; ++id) {
    if (a.tokens[id] != b.tokens[id]) {
      throw std::invalid_argument(draft_path + ": the draft's vocabulary differs from the target's at token id " +
                                  std::to_string(id) + ": target \"" + a.tokens[id] + "\", draft \"" + b.tokens[id] +
                                  "\"");
    }
  }
  if (a.size() != b.size() || target.config().vocab_size != draft.config().vocab_size) {
    throw std::invalid_argument(draft_path + ": the draft has " + std::to_string(b.size()) +
                                " tokens in its vocabulary, the target " + std::to_string(a.size()));
  }
}

}  // namespace inferscope
