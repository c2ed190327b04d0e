// Running llama.cpp's llama-bench on the same file for `bench --compare-llama-bench`: one test (ppN or
// tgN) per call, so that our repetitions and llama-bench's alternate in the same window of a shared
// machine.
#pragma once
#include <cstdint>
#include <string>

namespace inferscope::cli {

struct LlamaBenchTest {
  std::string llama_bench;  // the llama-bench executable
  std::string model;        // the GGUF file
  int64_t n_prompt = 0;     // ppN (n_gen 0) or tgN (n_prompt 0)
  int64_t n_gen = 0;
  int32_t threads = 1;
};

// llama-bench's tokens/s over one repetition (after its own warm-up run). Throws std::runtime_error
// naming the command and quoting the end of its output when it fails or prints no result.
double run_llama_bench(const LlamaBenchTest& test);

// The shell command run_llama_bench runs (every argument single-quoted).
std::string llama_bench_command(const LlamaBenchTest& test);

}  // namespace inferscope::cli
