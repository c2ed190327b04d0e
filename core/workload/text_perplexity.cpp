#include "core/workload/text_perplexity.h"

#include <memory>
#include <stdexcept>

#include "core/engine/sync_engine.h"
#include "core/model/llama_model.h"
#include "core/quant/quality.h"

namespace inferscope {
namespace {

// The weights at one level, scoring windows through the engine; its context is exactly one window.
class WindowScorer {
 public:
  WindowScorer(const LlamaModel& model, EngineConfig config, WeightQuant level, int64_t ctx,
               const ConversionProgressFactory& on_conversion)
      : engine_(model, with_level(config, level, ctx), progress_options(level, on_conversion)) {}

  // Logits at positions `from` .. n - 1 of `window` ((n - from) x vocab), on an empty cache; the
  // positions before `from` are never put through the output head.
  const std::vector<float>& score(std::span<const TokenId> window, int32_t from) {
    EngineRequest r;
    r.prompt_tokens.assign(window.begin(), window.end());
    r.max_tokens = 1;
    r.sampling.ignore_eos = true;
    r.logits = LogitsOutput::All;
    r.logits_from = from;
    logits_.assign((window.size() - static_cast<size_t>(from)) * vocab(), 0.0f);
    const RequestOutcome outcome = engine_.run(std::move(r), {}, [&](RequestId, int32_t position, std::span<const float> row) {
      const auto offset = static_cast<size_t>(position - from) * vocab();
      std::copy(row.begin(), row.end(), logits_.begin() + static_cast<ptrdiff_t>(offset));
    });
    if (outcome.reason == StopReason::Failed) throw std::runtime_error("perplexity: " + outcome.error);
    return logits_;
  }
  size_t vocab() const { return static_cast<size_t>(engine_.core().model().config().vocab_size); }
  LevelPerplexity describe(double perplexity) const {
    return {std::string(weight_quant_name(engine_.config().quant)), perplexity, engine_.core().weights().weight_bytes(),
            engine_.core().weights().fallbacks()};
  }

 private:
  static EngineConfig with_level(EngineConfig c, WeightQuant level, int64_t ctx) {
    c.quant = level;
    c.context_length = static_cast<int32_t>(ctx);
    c.kv.prefix_cache = false;  // every window starts from an empty cache
    return c;
  }
  static EngineCoreOptions progress_options(WeightQuant level, const ConversionProgressFactory& on_conversion) {
    EngineCoreOptions o;
    if (on_conversion) o.conversion_progress = on_conversion(level);
    return o;
  }
  SyncEngine engine_;
  std::vector<float> logits_;
};

}  // namespace

TextPerplexity measure_text_perplexity(const LlamaModel& model, const EngineConfig& config,
                                       std::span<const TokenId> tokens, int64_t ctx,
                                       std::optional<WeightQuant> reference,
                                       const ConversionProgressFactory& on_conversion, PerplexityMethod method) {
  const Vocab& vocab_info = model.tokenizer().vocab();
  const std::vector<TokenWindow> windows =
      perplexity_windows(static_cast<int64_t>(tokens.size()), ctx, method, vocab_info.add_bos && vocab_info.bos >= 0);
  if (windows.empty()) {
    throw std::invalid_argument("perplexity: the text gives " + std::to_string(tokens.size()) + " token(s); the " +
                                perplexity_method_name(method) + " method needs at least " +
                                std::to_string(perplexity_min_tokens(method, ctx)));
  }
  WindowScorer level_scorer(model, config, config.quant, ctx, on_conversion);
  const auto reference_scorer =
      reference ? std::make_unique<WindowScorer>(model, config, *reference, ctx, on_conversion) : nullptr;
  const size_t vocab = level_scorer.vocab();
  PerplexityAccumulator level_ppl, reference_ppl;
  DivergenceAccumulator divergence;
  std::vector<TokenId> window;
  for (const TokenWindow& w : windows) {
    window.assign(tokens.begin() + w.begin, tokens.begin() + w.end);
    if (w.bos_first) window.front() = vocab_info.bos;
    const auto first = static_cast<int32_t>(w.first_scored);
    const std::span<const float> logits = level_scorer.score(window, first);
    const std::span<const float> reference_logits =
        reference_scorer ? std::span<const float>(reference_scorer->score(window, first)) : std::span<const float>();
    // Position i's logits (row i - first) predict token i + 1 of the window.
    for (size_t i = static_cast<size_t>(first); i + 1 < window.size(); ++i) {
      const size_t offset = (i - static_cast<size_t>(first)) * vocab;
      const std::span<const float> row = logits.subspan(offset, vocab);
      level_ppl.add(row, window[i + 1]);
      if (!reference_scorer) continue;
      const std::span<const float> reference_row = reference_logits.subspan(offset, vocab);
      reference_ppl.add(reference_row, window[i + 1]);
      divergence.add(reference_row, row);
    }
  }
  TextPerplexity result;
  result.method = method;
  result.level = level_scorer.describe(level_ppl.perplexity());
  result.tokens = level_ppl.tokens();
  result.windows = windows.size();
  if (reference_scorer) {
    result.reference = reference_scorer->describe(reference_ppl.perplexity());
    result.kl_divergence_mean = divergence.mean_kl();
    result.top1_agreement = divergence.top1_agreement();
  }
  return result;
}

}  // namespace inferscope
