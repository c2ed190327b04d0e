// inferscope-cli perplexity: how well the model predicts a text at a quantization level, and how far
// that level's next-token distributions are from another level's.
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/cli/commands.h"
#include "core/cli/model_options.h"
#include "core/engine/sync_engine.h"
#include "core/quant/quality.h"

namespace inferscope::cli {
namespace {

constexpr int64_t kDefaultContext = 512;

std::string read_text_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw UsageError("--file: " + path + " is not a readable file");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) throw UsageError("--file: cannot read " + path);
  return text.str();
}

// The weights at one level, scoring windows through the engine.
class WindowScorer {
 public:
  // Its context is exactly one window.
  WindowScorer(const LlamaModel& model, EngineConfig config, WeightQuant level)
      : engine_(model, with_level(config, level), progress_options(level)) {}

  // Logits at every position of `window` (n x vocab), on an empty cache.
  const std::vector<float>& score(std::span<const TokenId> window) {
    EngineRequest r;
    r.prompt_tokens.assign(window.begin(), window.end());
    r.max_tokens = 1;
    r.sampling.ignore_eos = true;
    r.logits = LogitsOutput::All;
    logits_.assign(window.size() * vocab(), 0.0f);
    const RequestOutcome outcome = engine_.run(std::move(r), {}, [&](RequestId, int32_t position, std::span<const float> row) {
      std::copy(row.begin(), row.end(), logits_.begin() + static_cast<ptrdiff_t>(position * vocab()));
    });
    if (outcome.reason == StopReason::Failed) throw std::runtime_error("perplexity: " + outcome.error);
    return logits_;
  }
  size_t vocab() const { return static_cast<size_t>(engine_.core().model().config().vocab_size); }
  std::string level() const { return std::string(weight_quant_name(engine_.config().quant)); }
  size_t weight_bytes() const { return engine_.core().weights().weight_bytes(); }
  std::vector<std::string> f16_fallbacks() const { return engine_.core().weights().f16_fallbacks(); }

 private:
  static EngineConfig with_level(EngineConfig c, WeightQuant level) {
    c.quant = level;
    c.kv.prefix_cache = false;  // every window starts from an empty cache
    return c;
  }
  static EngineCoreOptions progress_options(WeightQuant level) {
    EngineCoreOptions o;
    o.conversion_progress = conversion_progress_printer(level);
    return o;
  }
  SyncEngine engine_;
  std::vector<float> logits_;
};

std::string f16_fallback_list(const WindowScorer& scorer) {
  std::string names;
  for (const std::string& n : scorer.f16_fallbacks()) names += (names.empty() ? "" : ", ") + n;
  return names;
}

std::string fixed(double v, int precision) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(precision) << v;
  return s.str();
}

}  // namespace

int cmd_perplexity(int argc, char** argv) {
  const std::vector<OptionSpec> specs = with_model_options({
      {"--file", "-f", true, "the text to score (UTF-8)"},
      {"--json", "", false, "print one JSON object"},
      {"--compare-to", "", true, "a reference level (f32, ...; other options alike): also report KL(P_ref || P) and top-1 agreement"},
  });
  if (print_help_if_asked(
          "perplexity --model PATH --file TEXT [--ctx 512] [--quant L] [--compare-to L] [--json] [--threads N]\n"
          "The text is tokenized (BOS first when the vocabulary uses one) and cut into windows of --ctx tokens\n"
          "(default 512), window k starting at token k*(ctx-1), so each window begins on the previous one's last\n"
          "token. Each window runs on a fresh KV cache and every token after its first is scored with the logits\n"
          "of the position before it: every token of the text but the first is scored exactly once.\n"
          "perplexity = exp(mean -ln p(token)); KL and top-1 agreement are averaged over the same positions.",
          specs, argc, argv)) {
    return 0;
  }
  const Args args(specs, argc, argv, 2);
  const std::string path = args.required("--file");
  const int64_t ctx = args.integer("--ctx", kDefaultContext, 2, 1 << 24);
  const bool json = args.has("--json");
  EngineConfig config = engine_config(args);
  const bool compare = args.has("--compare-to");
  const WeightQuant reference_level = weight_quant(args, "--compare-to");  // used only with compare
  const std::string text = read_text_file(path);
  auto model = load_model(args);
  if (ctx > model->config().context_length) {
    throw UsageError("--ctx: " + std::to_string(ctx) + " exceeds the model's context length of " +
                     std::to_string(model->config().context_length));
  }
  const std::vector<TokenId> tokens = model->tokenizer().encode(text, true, false);
  if (tokens.size() < 2) {
    throw UsageError("--file: " + path + " gives " + std::to_string(tokens.size()) +
                     " token(s); perplexity needs at least 2");
  }
  config.context_length = static_cast<int32_t>(ctx);

  WindowScorer level_scorer(*model, config, config.quant);
  const auto reference_scorer = compare ? std::make_unique<WindowScorer>(*model, config, reference_level) : nullptr;
  const auto vocab = static_cast<size_t>(model->config().vocab_size);
  PerplexityAccumulator level_ppl, reference_ppl;
  DivergenceAccumulator divergence;
  const std::vector<TokenWindow> windows = perplexity_windows(static_cast<int64_t>(tokens.size()), ctx);
  for (const TokenWindow& w : windows) {
    const std::span<const TokenId> window(tokens.data() + w.begin, static_cast<size_t>(w.end - w.begin));
    const std::span<const float> logits = level_scorer.score(window);
    const std::span<const float> reference_logits = reference_scorer ? std::span<const float>(reference_scorer->score(window))
                                                                 : std::span<const float>();
    // Position i's logits predict token i + 1 of the window.
    for (size_t i = 0; i + 1 < window.size(); ++i) {
      const std::span<const float> row = logits.subspan(i * vocab, vocab);
      level_ppl.add(row, window[i + 1]);
      if (!reference_scorer) continue;
      const std::span<const float> reference_row = reference_logits.subspan(i * vocab, vocab);
      reference_ppl.add(reference_row, window[i + 1]);
      divergence.add(reference_row, row);
    }
  }

  const std::string level_name(level_scorer.level());
  if (json) {
    nlohmann::json out = {{"perplexity", level_ppl.perplexity()},
                          {"tokens", level_ppl.tokens()},
                          {"weight_bytes", level_scorer.weight_bytes()},
                          {"quant", level_name},
                          {"f16_fallback", level_scorer.f16_fallbacks()},
                          {"ctx", ctx},
                          {"windows", windows.size()}};
    if (reference_scorer) {
      out["reference_quant"] = reference_scorer->level();
      out["kl_divergence_mean"] = divergence.mean_kl();
      out["top1_agreement"] = divergence.top1_agreement();
      out["reference_perplexity"] = reference_ppl.perplexity();
      out["reference_weight_bytes"] = reference_scorer->weight_bytes();
    }
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::cout << "perplexity at " << level_name << ": " << fixed(level_ppl.perplexity(), 4) << " over "
            << level_ppl.tokens() << " scored tokens (" << windows.size() << " window(s) of up to " << ctx
            << " tokens)\n";
  std::cout << "weights: " << level_scorer.weight_bytes() << " bytes";
  const std::string fallbacks = f16_fallback_list(level_scorer);
  std::cout << (fallbacks.empty() ? "" : " (stored as f16: " + fallbacks + ")") << "\n";
  if (reference_scorer) {
    std::cout << "against " << reference_scorer->level() << ": mean KL divergence "
              << std::setprecision(6) << divergence.mean_kl() << " nats, top-1 agreement "
              << fixed(100.0 * divergence.top1_agreement(), 2) << "%, reference perplexity "
              << fixed(reference_ppl.perplexity(), 4) << ", reference weights "
              << reference_scorer->weight_bytes() << " bytes\n";
  }
  return 0;
}

}  // namespace inferscope::cli
