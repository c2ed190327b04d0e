// inferscope-cli: the engine without the window.
#include <cstring>
#include <iostream>
#include <string>

#include "core/cli/args.h"
#include "core/cli/commands.h"
#include "core/version/version.h"

namespace {

struct Command {
  const char* name;
  int (*run)(int, char**);
  const char* help;
};

const Command kCommands[] = {
    {"generate", inferscope::cli::cmd_generate, "generate text from a prompt or a chat message"},
    {"chat", inferscope::cli::cmd_chat, "interactive chat in the terminal"},
    {"tokenize", inferscope::cli::cmd_tokenize, "show how text becomes tokens"},
    {"inspect", inferscope::cli::cmd_inspect, "model architecture, tensors, tokenizer, KV-cache size"},
    {"devices", inferscope::cli::cmd_devices, "CPU features and GPUs"},
    {"bench", inferscope::cli::cmd_bench, "prompt-processing and generation speed (llama-bench style)"},
    {"serve", inferscope::cli::cmd_serve, "an OpenAI-compatible server on the model (chat and completions)"},
    {"serve-sim", inferscope::cli::cmd_serve_sim, "replay a serving workload: scheduler, KV memory, TTFT, tokens/s"},
    {"quantize", inferscope::cli::cmd_quantize, "save a model with its weights at another quantization level"},
    {"perplexity", inferscope::cli::cmd_perplexity, "perplexity of a text, and KL/top-1 agreement against a level"},
    {"learn", inferscope::cli::cmd_learn, "run a guided experiment and narrate what it measured"},
};

void usage(std::ostream& out) {
  out << "usage: inferscope-cli COMMAND [options]   (COMMAND --help for its options)\n\ncommands:\n";
  for (const Command& c : kCommands) out << "  " << c.name << std::string(12 - std::strlen(c.name), ' ') << c.help << "\n";
  out << "\noptions:\n  --help      this list\n  --version   the version (with the git revision when built from a checkout)\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    usage(argc < 2 ? std::cerr : std::cout);
    return argc < 2 ? 2 : 0;
  }
  if (std::string(argv[1]) == "--version") {
    std::cout << "inferscope-cli " << inferscope::version_string() << "\n";
    return 0;
  }
  for (const Command& c : kCommands) {
    if (argv[1] != std::string(c.name)) continue;
    try {
      return c.run(argc, argv);
    } catch (const inferscope::cli::UsageError& e) {
      std::cerr << "inferscope-cli " << c.name << ": " << e.what() << "\n";
      return 2;
    } catch (const std::exception& e) {
      std::cerr << "inferscope-cli " << c.name << ": error: " << e.what() << "\n";
      return 2;
    }
  }
  std::cerr << "inferscope-cli: unknown command '" << argv[1] << "'\n";
  usage(std::cerr);
  return 2;
}
