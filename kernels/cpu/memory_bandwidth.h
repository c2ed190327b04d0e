// Measures how fast this machine streams memory into the cores: the roofline that bounds decode,
// where every weight byte is read once per token.
#pragma once
#include <cstddef>

namespace inferscope {

class ThreadPool;

struct BandwidthResult {
  double read_bytes_per_second = 0;
  size_t buffer_bytes = 0;
  int repetitions = 0;
};

// Reads a buffer of `buffer_bytes` (much larger than the caches, in large pages as the packed weights
// are) `repetitions` times on every pool thread and reports the best pass.
BandwidthResult measure_read_bandwidth(ThreadPool& pool, size_t buffer_bytes, int repetitions);

}  // namespace inferscope
