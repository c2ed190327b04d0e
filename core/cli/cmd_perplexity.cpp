// inferscope-cli perplexity: how well the model predicts a text at a quantization level, and how far
// that level's next-token distributions are from another level's.
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/cli/commands.h"
#include "core/cli/model_options.h"
#include "core/common/text_format.h"
#include "core/workload/text_perplexity.h"

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

// [{"tensor": "blk.0.attn_q.weight", "wanted": "q4_K", "stored": "q5_0"}, ...]
nlohmann::json fallbacks_json(const std::vector<MatrixFallback>& fallbacks) {
  nlohmann::json out = nlohmann::json::array();
  for (const MatrixFallback& f : fallbacks) {
    out.push_back({{"tensor", f.name}, {"wanted", dtype_name(f.format.wanted)}, {"stored", dtype_name(f.format.stored)}});
  }
  return out;
}

}  // namespace

int cmd_perplexity(int argc, char** argv) {
  const std::vector<OptionSpec> specs = with_model_options({
      {"--file", "-f", true, "the text to score (UTF-8)"},
      {"--json", "", false, "print one JSON object"},
      {"--compare-to", "", true, "a reference level (f32, ...; other options alike): also report KL(P_ref || P) and top-1 agreement"},
      {"--method", "", true, "all-tokens (default) or llamacpp: llama-perplexity's chunks and scored positions"},
  });
  if (print_help_if_asked(
          "perplexity --model PATH --file TEXT [--ctx 512] [--method all-tokens|llamacpp] [--quant L] [--compare-to L]\n"
          "           [--json] [--threads N]\n"
          "The text is tokenized (BOS first when the vocabulary uses one) and cut into windows of --ctx tokens\n"
          "(default 512), each run on a fresh KV cache.\n"
          "all-tokens: window k starts at token k*(ctx-1), so each window begins on the previous one's last token,\n"
          "and every token after a window's first is scored with the logits of the position before it: every\n"
          "token of the text but the first is scored exactly once.\n"
          "llamacpp: llama-perplexity's procedure, to compare with its figure: floor(n / ctx) chunks of ctx tokens\n"
          "(the rest dropped), each chunk's first token replaced by BOS when the vocabulary uses one, and the\n"
          "positions ctx/2 .. ctx-2 scored.\n"
          "perplexity = exp(mean -ln p(token)); KL and top-1 agreement are averaged over the same positions.",
          specs, argc, argv)) {
    return 0;
  }
  const Args args(specs, argc, argv, 2);
  const std::string path = args.required("--file");
  const int64_t ctx = args.integer("--ctx", kDefaultContext, 2, 1 << 24);
  const std::string method_name = args.choice("--method", "all-tokens", {"all-tokens", "llamacpp"});
  const std::optional<PerplexityMethod> method = perplexity_method_from_name(method_name);
  if (ctx < perplexity_min_ctx(*method)) {
    throw UsageError("--ctx: the " + method_name + " method needs chunks of at least " +
                     std::to_string(perplexity_min_ctx(*method)) + " tokens, not " + std::to_string(ctx));
  }
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
  const auto needed = static_cast<size_t>(perplexity_min_tokens(*method, ctx));
  if (tokens.size() < needed) {
    throw UsageError("--file: " + path + " gives " + std::to_string(tokens.size()) + " token(s); the " + method_name +
                     " method needs at least " + std::to_string(needed));
  }
  const TextPerplexity r = measure_text_perplexity(*model, config, tokens, ctx,
                                                   compare ? std::optional(reference_level) : std::nullopt,
                                                   conversion_progress_printer, *method);
  if (json) {
    nlohmann::json out = {{"perplexity", r.level.perplexity},
                          {"tokens", r.tokens},
                          {"weight_bytes", r.level.weight_bytes},
                          {"quant", r.level.quant},
                          {"fallbacks", fallbacks_json(r.level.fallbacks)},
                          {"ctx", ctx},
                          {"method", perplexity_method_name(r.method)},
                          {"windows", r.windows}};
    if (r.reference) {
      out["reference_quant"] = r.reference->quant;
      out["kl_divergence_mean"] = r.kl_divergence_mean;
      out["top1_agreement"] = r.top1_agreement;
      out["reference_perplexity"] = r.reference->perplexity;
      out["reference_weight_bytes"] = r.reference->weight_bytes;
    }
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::cout << "perplexity at " << r.level.quant << ": " << format_fixed(r.level.perplexity, 4) << " over " << r.tokens
            << " scored tokens (" << r.windows << " window(s) of up to " << ctx << " tokens, method "
            << perplexity_method_name(r.method) << ")\n";
  std::cout << "weights: " << r.level.weight_bytes << " bytes";
  const std::string fallbacks = fallback_summary(r.level.fallbacks);
  std::cout << (fallbacks.empty() ? "" : " (rows not whole blocks: " + fallbacks + ")") << "\n";
  if (r.reference) {
    std::cout << "against " << r.reference->quant << ": mean KL divergence " << std::setprecision(6)
              << r.kl_divergence_mean << " nats, top-1 agreement " << format_fixed(100.0 * r.top1_agreement, 2)
              << "%, reference perplexity " << format_fixed(r.reference->perplexity, 4) << ", reference weights "
              << r.reference->weight_bytes << " bytes\n";
  }
  return 0;
}

}  // namespace inferscope::cli
