// The attention micro-benchmark behind `bench --attention-sweep`: one attention call per point, timed
// for each implementation, over a paged KV cache filled with random K/V. Two phases per context:
// prefill (all `context` tokens as queries, causal) and decode (one query at position context-1).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/attention/attention.h"
#include "kernels/format/dtype.h"

namespace inferscope {

struct AttentionBenchOptions {
  AttentionShape shape{9, 3, 64};  // SmolLM2-135M's attention (one layer)
  DType kv_dtype = DType::F16;
  int32_t block_size = 16;  // paged KV block size (8, 16 or 32)
  std::vector<int32_t> contexts{128, 256, 512, 1024, 2048, 4096, 8192};
  std::vector<std::string> implementations{"naive", "flash"};
  int32_t repeats = 3;  // timed calls per point, after one untimed call
  uint32_t seed = 1;
};

struct AttentionBenchRow {
  std::string implementation;
  std::string phase;  // "prefill" or "decode"
  int32_t context = 0;
  double seconds_mean = 0.0;  // per attention call
  double seconds_sd = 0.0;
  size_t scratch_bytes = 0;   // Attention::scratch_bytes() of the call
  double max_abs_diff = 0.0;  // largest |output - the first implementation's output| (0 for the first)
};

// Rows ordered by context, then phase (prefill, decode), then implementation as listed.
// Throws std::invalid_argument for an unknown implementation name or a bad shape.
std::vector<AttentionBenchRow> run_attention_sweep(const AttentionBenchOptions& options, ThreadPool& pool);

}  // namespace inferscope
