// Our forward pass against llama.cpp's (tests/llamacpp/llama_logits.cpp over libllama, built by
// scripts/llama-cpp.sh) on the same synthetic GGUF file, one per architecture and its special parts:
// llama, llama with Llama 3.1 RoPE factors, qwen2 (Q/K/V biases, NEOX pairs), qwen3 (per-head Q/K
// norms, a head size from key_length) and phi3 (fused attn_qkv and gate/up tensors). f32 weights and f32 K/V on both sides, all positions
// of one prefill.
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "core/model/llama_model.h"
#include "tests/support/engine_runs.h"
#include "tests/support/logit_compare.h"
#include "tests/support/synthetic_model.h"

namespace inferscope::test {
namespace {

constexpr int kTokens = 24;

// Both sides compute in f32 from the same f32 weights, in different orders (ggml's SIMD sums, ours):
// only rounding differs, about 2^-24 per operation over the ~1600 on a logit's path (as in
// test_forward_reference), ~1e-4 relative (observed <= 1.5e-6 for every architecture here).
constexpr double kBound = 1e-4;

struct Case {
  std::string name;
  SyntheticModelSpec spec;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::vector<Case> cases() {
  SyntheticModelSpec llama;
  llama.dim = 96, llama.n_heads = 6, llama.n_kv_heads = 2, llama.ffn_dim = 160, llama.vocab = 64;
  llama.rope_base = 1e6f, llama.context_length = 64, llama.seed = 31;
  SyntheticModelSpec llama3 = llama;
  llama3.rope_freq_factors = true, llama3.rope_base = 5e5f, llama3.seed = 32;
  SyntheticModelSpec qwen2;
  qwen2.architecture = "qwen2";
  qwen2.dim = 64, qwen2.n_heads = 4, qwen2.n_kv_heads = 2, qwen2.ffn_dim = 96, qwen2.vocab = 64, qwen2.seed = 33;
  qwen2.rope_base = 1e6f;
  SyntheticModelSpec qwen3 = qwen2;
  qwen3.architecture = "qwen3";
  qwen3.key_length = 32, qwen3.tied_output = true, qwen3.seed = 34;
  SyntheticModelSpec phi3 = qwen2;
  phi3.architecture = "phi3";
  phi3.n_kv_heads = 4, phi3.seed = 35;
  return {{"llama", llama}, {"llama3_rope_factors", llama3}, {"qwen2", qwen2}, {"qwen3", qwen3}, {"phi3", phi3}};
}

// llama.cpp's logits at every position of `tokens`: one row per line.
std::vector<std::vector<float>> llama_cpp_logits(const std::string& model, const std::vector<TokenId>& tokens) {
  std::ostringstream words;
  words << LLAMA_LOGITS << ' ' << model;
  for (TokenId id : tokens) words << ' ' << id;
  const std::string command = words.str();
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run " + command);
  std::string out;
  char buffer[1 << 16];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  if (::pclose(pipe) != 0) throw std::runtime_error(command + " failed");
  std::vector<std::vector<float>> rows;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream values(line);
    rows.emplace_back();
    for (float v; values >> v;) rows.back().push_back(v);
  }
  return rows;
}

class LlamaCppParity : public ::testing::TestWithParam<Case> {};

TEST_P(LlamaCppParity, LogitsMatchAtEveryPosition) {
  ASSERT_STRNE(LLAMA_LOGITS, "") << "llama.cpp is not built here: run scripts/llama-cpp.sh and configure with "
                                    "-DINFERSCOPE_LLAMA_CPP=<the folder it prints> (scripts/test.sh does both)";
  const Case& c = GetParam();
  SCOPED_TRACE(c.spec.describe());
  const std::string path = ::testing::TempDir() + "/parity-" + c.name + ".gguf";
  write_synthetic_model(c.spec, path);
  const auto model = LlamaModel::load(path);
  const std::vector<TokenId> tokens = random_tokens(kTokens, c.spec.vocab, c.spec.seed);
  EngineConfig config;
  config.kv_dtype = DType::F32;
  const std::vector<float> ours = engine_logits(*model, config, tokens);
  const std::vector<std::vector<float>> theirs = llama_cpp_logits(path, tokens);
  ASSERT_EQ(theirs.size(), tokens.size());
  const auto vocab = static_cast<size_t>(c.spec.vocab);
  for (size_t p = 0; p < tokens.size(); ++p) {
    ASSERT_EQ(theirs[p].size(), vocab) << "position " << p;
    const std::span<const float> row(ours.data() + p * vocab, vocab);
    EXPECT_LE(relative_error(row, theirs[p]), kBound) << "position " << p;
  }
}

INSTANTIATE_TEST_SUITE_P(Architectures, LlamaCppParity, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& param) { return param.param.name; });

}  // namespace
}  // namespace inferscope::test
