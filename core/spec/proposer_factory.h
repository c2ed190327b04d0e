// Builds the proposer a SpecConfig names. Model drafts are loaded (draft) or converted (self-quant)
// here, before the engine changes anything, so a bad draft is refused with nothing touched.
#pragma once
#include <memory>

#include "core/kv/kv_config.h"
#include "core/model/compute_device.h"
#include "core/model/forward_maker.h"
#include "core/model/llama_model.h"
#include "core/quant/converted_weights.h"
#include "core/spec/model_draft_proposer.h"
#include "core/spec/spec_config.h"

namespace inferscope {

// A draft model ready to run, before its cache exists: what it reads and the shape of its KV.
struct DraftModel {
  std::unique_ptr<LlamaModel> owned_model;         // draft: the loaded file
  std::unique_ptr<ConvertedWeights> owned_weights;  // self-quant: the target's matrices at the draft level
  const LlamaModel* model = nullptr;
  const LlamaWeights* weights = nullptr;
  KvGeometry geometry;                              // its cache's (own-KV modes)
};

// Loads or converts the draft of an own-KV mode (draft, self-quant); an empty DraftModel for the
// others. `target_weights` are the weights the target runs on (self-quant must be smaller).
// Throws std::invalid_argument with the reason (another vocabulary, a level no smaller than the
// target's weights, an unreadable file).
DraftModel load_draft_model(const SpecConfig& spec, const LlamaModel& target, const LlamaWeights& target_weights,
                            DType kv_dtype, int32_t threads);

// Where a model draft runs: the target's device, its forward pass built as the target's is.
struct DraftForward {
  ForwardMaker make;
  ForwardOptions options;
  ComputeDevice device;
};

// The proposer; `draft` (moved from) is what load_draft_model gave, `draft_kv` its cache's settings,
// `target_weights` what an early-exit draft runs on. Null for SpecMode::None. Throws what `forward`'s
// maker throws when the device cannot run the draft (it names why).
std::unique_ptr<Proposer> make_proposer(const SpecConfig& spec, const LlamaModel& target,
                                        const LlamaWeights& target_weights, DraftModel draft, const KvConfig& draft_kv,
                                        const DraftForward& forward);

// How one KV budget is shared between the target's cache and a draft's own cache: in proportion to
// their bytes per token, so both hold the same number of tokens. Returns the target's share.
size_t target_kv_share(size_t budget_bytes, size_t target_bytes_per_token, size_t draft_bytes_per_token);

}  // namespace inferscope
