// Drafts with a model: k autoregressive steps of a cheaper forward pass, batched over every
// speculating sequence. Three flavours share this code:
//  - draft: another GGUF with the target's vocabulary, with a KV cache of its own;
//  - self-quant: the target's own matrices at a cheaper level, with a KV cache of its own;
//  - early-exit: the target's first L layers and its output head, in the target's cache. Those
//    layers compute exactly what the target's first L layers compute, so the K/V they write at
//    the draft positions are the ones the verify pass writes again.
// A draft of its own cache is kept in step lazily: each step it keeps the longest prefix of what it
// fed that the sequence still holds (the accepted drafts included), and feeds the rest.
#pragma once
#include <map>
#include <memory>
#include <string>

#include "core/model/forward_pass.h"
#include "core/model/llama_model.h"
#include "core/quant/converted_weights.h"
#include "core/spec/proposer.h"

namespace inferscope {

struct ModelDraftOptions {
  std::string name;        // "draft", "self-quant" or "early-exit"
  int32_t layers = 0;      // 0: every layer of the draft model; L: the first L (early exit)
  float p_min = 0.0f;      // stop a sequence's draft when the draft's top probability falls below this
};

class ModelDraftProposer final : public Proposer {
 public:
  // `forward` runs `model` (on the device the engine builds it for); what they read must outlive the
  // proposer unless it owns it (own). `kv`: the draft's own cache; null: run in the target's cache
  // (early exit).
  ModelDraftProposer(const LlamaModel& model, std::unique_ptr<ForwardPass> forward, std::unique_ptr<KvCache> kv,
                     ModelDraftOptions options);
  ~ModelDraftProposer() override;
  // Keeps what the draft reads alive as long as the proposer (a loaded draft file, converted weights).
  void own(std::unique_ptr<LlamaModel> model, std::unique_ptr<ConvertedWeights> weights);

  std::string_view name() const override { return options_.name; }
  void propose(std::span<const DraftRequest> requests, const ProposeContext& context,
               std::vector<Draft>& drafts) override;
  void on_removed(RequestId id, std::span<const TokenId> tokens, bool preempted) override;
  size_t kv_bytes() const override { return kv_ ? kv_->stats().used_bytes : 0; }

 private:
  // Where request i's next feed starts, after bringing its own-cache state in step with `history`;
  // -1 when the draft cache has no room for it.
  int32_t catch_up(const DraftRequest& r);

  std::unique_ptr<LlamaModel> owned_model_;
  std::unique_ptr<ConvertedWeights> owned_weights_;
  const LlamaModel& model_;
  ModelDraftOptions options_;
  std::unique_ptr<KvCache> kv_;
  std::unique_ptr<ForwardPass> forward_;
  std::map<RequestId, std::vector<TokenId>> fed_;  // own cache: the tokens whose K/V it holds
  std::vector<BatchSeq> batch_;
  std::vector<std::vector<TokenId>> feeds_;
  std::vector<float> logits_;
};

// Refuses a draft whose vocabulary differs from the target's: std::invalid_argument naming the
// first differing token id and both pieces (or the sizes).
void check_same_vocabulary(const LlamaModel& target, const LlamaModel& draft, const std::string& draft_path);

}  // namespace inferscope
