// inferscope-cli generate: stream a completion of a prompt or a chat message.
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/cli/commands.h"
#include "core/cli/model_options.h"
#include "core/engine/prompt.h"
#include "core/cli/sampling_options.h"
#include "core/engine/generation.h"

namespace inferscope::cli {

int cmd_generate(int argc, char** argv) {
  std::vector<OptionSpec> specs = with_model_options({
      {"--prompt", "-p", true, "text to continue (\"\" = start from BOS)"},
      {"--chat", "", true, "a user message, rendered with the model's chat template"},
      {"--system", "", true, "system prompt for --chat (default: the template's own, if any)"},
      {"--n-predict", "-n", true, "tokens to generate at most (default 256; -1: until EOS or the context ends)"},
      {"--json", "", false, "print one JSON object (text, tokens, metrics) instead of streaming"},
  });
  for (OptionSpec& s : sampling_option_specs()) specs.push_back(s);
  if (print_help_if_asked("generate --model PATH (--prompt TEXT | --chat TEXT [--system TEXT]) [options]", specs,
                          argc, argv)) {
    return 0;
  }
  const Args args(specs, argc, argv, 2);
  if (args.has("--prompt") == args.has("--chat")) throw UsageError("give exactly one of --prompt and --chat");
  if (args.has("--system") && !args.has("--chat")) throw UsageError("--system needs --chat");
  const int64_t n_predict = args.integer("--n-predict", 256, -1, 1 << 30);
  const bool json = args.has("--json");
  const SamplingParams sampling = sampling_params(args);

  auto model = load_model(args);
  Runtime runtime(*model, runtime_options(args));
  std::vector<TokenId> prompt;
  if (args.has("--prompt")) {
    prompt = encode_prompt(*model, args.str("--prompt", ""));
  } else {
    std::vector<ChatMessage> messages;
    if (args.has("--system")) messages.push_back({"system", args.str("--system", "")});
    messages.push_back({"user", args.str("--chat", "")});
    prompt = encode_chat(*model, messages);
  }
  const int32_t max_tokens = n_predict < 0 ? runtime.context_length() : static_cast<int32_t>(n_predict);

  Sampler sampler(sampling);
  const GenerationResult r = generate(runtime, 0, prompt, max_tokens, sampler, [&](std::string_view text) {
    if (!json) std::cout << text << std::flush;
    return true;
  });
  if (r.finish == FinishReason::ContextFull) {
    std::cerr << "\n[stopped: the context length of " << runtime.context_length() << " tokens is reached]\n";
  }
  if (json) {
    nlohmann::json out;
    out["text"] = r.text;
    out["tokens"] = r.tokens;
    out["prompt_tokens"] = r.prompt_tokens;
    out["finish_reason"] = finish_reason_name(r.finish);
    out["metrics"] = {{"time_to_first_token_seconds", r.time_to_first_token_seconds},
                      {"prefill_tokens_per_second", r.prefill_tokens_per_second},
                      {"decode_tokens_per_second", r.decode_tokens_per_second}};
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << "\n";
  }
  return 0;
}

}  // namespace inferscope::cli
