// Writes a random-weight Llama model (tests/support/synthetic_model.h) as GGUF, for benchmarks that
// need a model stored in full precision at a chosen size:
//   write-synthetic-model OUT.gguf [--dim N] [--layers N] [--heads N] [--kv-heads N] [--ffn N]
//                                  [--vocab N] [--ctx N] [--rope-base N] [--seed N] [--tied] [--type T]
// (--tied: no output.weight, the logits reuse token_embd, as Llama 3.2 1B/3B. --type: the matrices'
// format, f32 by default; f16 halves the file, which a 7B shape needs: 14 GB instead of 28.)
// Its vocabulary is <unk>, <s>, </s>, then the pieces "t3", "t4", ...: a text made of those pieces
// tokenizes into them (for perplexity and KL measurements).
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "tests/support/synthetic_model.h"

int main(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') {
    std::fprintf(stderr, "usage: %s OUT.gguf [--dim N] [--layers N] [--heads N] [--kv-heads N] [--ffn N] [--vocab N] "
                         "[--ctx N] [--rope-base N] [--seed N] [--tied] [--type f32|f16|q8_0|q4_0|...]\n", argv[0]);
    return 2;
  }
  inferscope::test::SyntheticModelSpec spec;
  const std::map<std::string, int32_t*> fields = {
      {"--dim", &spec.dim},     {"--layers", &spec.n_layers}, {"--heads", &spec.n_heads},
      {"--kv-heads", &spec.n_kv_heads}, {"--ffn", &spec.ffn_dim}, {"--vocab", &spec.vocab},
      {"--ctx", &spec.context_length}};
  for (int i = 2; i < argc; i += 2) {
    const std::string name = argv[i];
    if (name == "--tied") {
      spec.tied_output = true;
      --i;  // a flag: no value follows
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s needs a value\n", name.c_str());
      return 2;
    }
    if (name == "--type") {
      const std::optional<inferscope::DType> type = inferscope::dtype_from_name(argv[i + 1]);
      if (!type) {
        std::fprintf(stderr, "--type: '%s' is no weight type (f32, f16, q8_0, q4_0, q4_1, ...)\n", argv[i + 1]);
        return 2;
      }
      spec.weight_dtype = *type;
      continue;
    }
    char* end = nullptr;
    const long value = std::strtol(argv[i + 1], &end, 10);
    if (*end != '\0' || value <= 0 || value > (1 << 24)) {
      std::fprintf(stderr, "%s: '%s' is not a positive integer\n", name.c_str(), argv[i + 1]);
      return 2;
    }
    if (name == "--seed") {
      spec.seed = static_cast<uint32_t>(value);
    } else if (name == "--rope-base") {
      spec.rope_base = static_cast<float>(value);
    } else if (auto it = fields.find(name); it != fields.end()) {
      *it->second = static_cast<int32_t>(value);
    } else {
      std::fprintf(stderr, "unknown option %s\n", name.c_str());
      return 2;
    }
  }
  try {
    inferscope::test::write_synthetic_model(spec, argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  std::printf("%s: %s\n", argv[1], spec.describe().c_str());
  return 0;
}
