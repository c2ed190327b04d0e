#include "core/spec/proposer_factory.h"

#include <stdexcept>

#include "core/common/text_format.h"
#include "core/spec/ngram_proposer.h"
#include "kernels/cpu/thread_pool.h"

namespace inferscope {
DraftModel load_draft_model(const SpecConfig& spec, const LlamaModel& target, const LlamaWeights& target_weights,
                            DType kv_dtype, int32_t threads) {
  DraftModel d;
  if (spec.mode == SpecMode::Draft) {
    d.owned_model = LlamaModel::load(spec.draft_model);
    check_same_vocabulary(target, *d.owned_model, spec.draft_model);
    d.model = d.owned_model.get();
    d.weights = &d.owned_model->weights();
  } else if (spec.mode == SpecMode::SelfQuant) {
    ThreadPool pool(threads);
    d.owned_weights = ConvertedWeights::convert(target, spec.draft_quant, pool);
    // A draft that reads as many bytes as the target saves nothing.
    if (d.owned_weights->weight_bytes() >= target_weights.matrix_bytes()) {
      throw std::invalid_argument("self-quant draft at " + std::string(weight_quant_name(spec.draft_quant)) + " is " +
                                  format_mib(d.owned_weights->weight_bytes()) + ", no smaller than the target's weights (" +
                                  format_mib(target_weights.matrix_bytes()) + "): pick a cheaper draft level");
    }
    d.model = &target;
    d.weights = &d.owned_weights->weights();
  } else {
    return d;
  }
  d.geometry = d.model->kv_geometry(kv_dtype);
  return d;
}

std::unique_ptr<Proposer> make_proposer(const SpecConfig& spec, const LlamaModel& target,
                                        const LlamaWeights& target_weights, DraftModel draft, const KvConfig& draft_kv,
                                        const DraftForward& forward) {
  validate_spec(spec, target.config().n_layers);
  ModelDraftOptions options;
  options.name = std::string(spec_mode_name(spec.mode));
  options.p_min = spec.draft_p_min;
  switch (spec.mode) {
    case SpecMode::None: return nullptr;
    case SpecMode::Ngram:
      // The vocabulary lives with the model, which outlives the engine and its proposer.
      return std::make_unique<NgramProposer>(spec.ngram_min, spec.ngram_max,
                                             [&vocab = target.tokenizer().vocab()](TokenId t) { return vocab.is_eog(t); });
    case SpecMode::EarlyExit:
      options.layers = spec.draft_layers;
      return std::make_unique<ModelDraftProposer>(
          target, forward.make(target, target_weights, forward.options, forward.device), nullptr, options);
    case SpecMode::Draft:
    case SpecMode::SelfQuant: {
      if (!draft.model) throw std::logic_error("make_proposer: the draft model was not loaded");
      KvConfig kv = draft_kv;
      kv.prefix_cache = false;  // its blocks are never looked up
      auto proposer = std::make_unique<ModelDraftProposer>(
          *draft.model, forward.make(*draft.model, *draft.weights, forward.options, forward.device),
          make_kv_cache(draft.geometry, kv), options);
      proposer->own(std::move(draft.owned_model), std::move(draft.owned_weights));
      return proposer;
    }
  }
  return nullptr;
}

size_t target_kv_share(size_t budget_bytes, size_t target_bytes_per_token, size_t draft_bytes_per_token) {
  const size_t per_token = target_bytes_per_token + draft_bytes_per_token;
  return budget_bytes / per_token * target_bytes_per_token;
}

}  // namespace inferscope
