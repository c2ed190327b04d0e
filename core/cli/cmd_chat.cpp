// inferscope-cli chat: an interactive conversation in the terminal; the history stays in the KV cache.
#include <algorithm>
#include <iostream>
#include <string>

#include "core/cli/commands.h"
#include "core/cli/model_options.h"
#include "core/engine/prompt.h"
#include "core/cli/sampling_options.h"
#include "core/engine/generation.h"

namespace inferscope::cli {
namespace {

constexpr SeqId kChatSeq = 0;

// Feeds only what the cache lacks: when the cached tokens are a prefix of the new prompt, the
// conversation so far is reused; otherwise the sequence starts over.
std::vector<TokenId> tokens_to_feed(Runtime& runtime, const std::vector<TokenId>& prompt) {
  const std::vector<TokenId>& held = runtime.tokens(kChatSeq);
  if (held.size() < prompt.size() && std::equal(held.begin(), held.end(), prompt.begin())) {
    return {prompt.begin() + static_cast<std::ptrdiff_t>(held.size()), prompt.end()};
  }
  runtime.reset(kChatSeq);
  return prompt;
}

}  // namespace

int cmd_chat(int argc, char** argv) {
  std::vector<OptionSpec> specs = with_model_options({
      {"--system", "", true, "system prompt (default: the template's own, if any)"},
      {"--n-predict", "-n", true, "tokens per reply at most (default 512)"},
  });
  for (OptionSpec& s : sampling_option_specs()) specs.push_back(s);
  if (print_help_if_asked("chat --model PATH [options]   (type /reset to start over, /quit to leave)", specs, argc,
                          argv)) {
    return 0;
  }
  const Args args(specs, argc, argv, 2);
  const int32_t max_tokens = static_cast<int32_t>(args.integer("--n-predict", 512, 1, 1 << 30));
  auto model = load_model(args);
  Runtime runtime(*model, runtime_options(args));
  Sampler sampler(sampling_params(args));

  std::vector<ChatMessage> messages;
  if (args.has("--system")) messages.push_back({"system", args.str("--system", "")});
  const size_t first_turn = messages.size();
  std::cerr << model->config().name << " (" << chat_family_name(model->chat_template().family)
            << " template). /reset starts over, /quit leaves.\n";
  std::string line;
  while (true) {
    std::cout << "> " << std::flush;
    if (!std::getline(std::cin, line) || line == "/quit") break;
    if (line == "/reset") {
      messages.resize(first_turn);
      runtime.reset(kChatSeq);
      std::cout << "[conversation reset]\n";
      continue;
    }
    if (line.empty()) continue;
    messages.push_back({"user", line});
    const std::vector<TokenId> prompt = encode_chat(*model, messages);
    if (static_cast<int32_t>(prompt.size()) >= runtime.context_length()) {
      std::cout << "[the conversation no longer fits the context of " << runtime.context_length()
                << " tokens; /reset to start over]\n";
      messages.pop_back();
      continue;
    }
    const std::vector<TokenId> feed = tokens_to_feed(runtime, prompt);
    const GenerationResult r = generate(runtime, kChatSeq, feed, max_tokens, sampler, [](std::string_view text) {
      std::cout << text << std::flush;
      return true;
    });
    messages.push_back({"assistant", r.text});
    std::cout << "\n";
    std::cerr << "[" << r.tokens.size() << " tokens, " << static_cast<int>(r.decode_tokens_per_second) << " tok/s, context "
              << runtime.length(kChatSeq) << "/" << runtime.context_length() << "]\n";
    if (r.finish == FinishReason::ContextFull) std::cout << "[the context is full; /reset to start over]\n";
  }
  return 0;
}

}  // namespace inferscope::cli
