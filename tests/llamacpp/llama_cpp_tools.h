// Running llama.cpp's programs from a test and reading what they print: the llama-logits harness
// (tests/llamacpp/llama_logits.cpp over libllama) and llama-perplexity (scripts/llama-cpp.sh).
#pragma once
#include <string>
#include <vector>

#include "core/tokenizer/vocab.h"

namespace inferscope::test {

// Runs a shell command and returns its standard output; throws std::runtime_error when it cannot
// start or exits non-zero.
std::string command_output(const std::string& command);

// llama.cpp's logits at every position of `tokens` (one prefill, f32 K/V): one row per position.
std::vector<std::vector<float>> llama_cpp_logits(const std::string& llama_logits, const std::string& model,
                                                 const std::vector<TokenId>& tokens);

// llama-perplexity's final estimate for the first `chunks` chunks of `text_file` at context `ctx`, on
// `threads` threads.
double llama_cpp_perplexity(const std::string& llama_perplexity, const std::string& model,
                            const std::string& text_file, int ctx, int chunks, int threads);

}  // namespace inferscope::test
