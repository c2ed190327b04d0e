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

// One of a position's most likely next tokens, by llama.cpp.
struct TopLogprob {
  TokenId id = 0;
  double logprob = 0;
};

// llama.cpp's k most likely next tokens at every position of `tokens` (one prefill, f32 K/V), most
// likely first: one row per position.
std::vector<std::vector<TopLogprob>> llama_cpp_top_logprobs(const std::string& llama_logits, const std::string& model,
                                                            const std::vector<TokenId>& tokens, int k);

// Writes `out`, an f32 copy of `model` made by llama-quantize (--allow-requantize F32): llama.cpp then
// computes exactly in f32 from the weights our exact f32-activation path multiplies, instead of
// rounding activations to 8 bits for the quantized matmuls. Throws when llama-quantize fails.
void write_f32_copy(const std::string& llama_quantize, const std::string& model, const std::string& out);

// llama-perplexity's final estimate for the first `chunks` chunks of `text_file` at context `ctx`, on
// `threads` threads. f32_kv: K and V cached in f32 with flash attention off (-ctk f32 -ctv f32 -fa off)
// instead of its default f16 cache and flash attention.
double llama_cpp_perplexity(const std::string& llama_perplexity, const std::string& model,
                            const std::string& text_file, int ctx, int chunks, int threads, bool f32_kv = false);

}  // namespace inferscope::test
