#include "kernels/cpu/memory_bandwidth.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/cpu/large_pages.h"
#include "kernels/cpu/thread_pool.h"

namespace inferscope {

BandwidthResult measure_read_bandwidth(ThreadPool& pool, size_t buffer_bytes, int repetitions) {
  const size_t n = std::max<size_t>(buffer_bytes / sizeof(uint64_t), 1024);
  // in large pages, as the packed weights it bounds
  std::vector<uint64_t, LargePageAllocator<uint64_t>> buffer(n);
  for (size_t i = 0; i < n; ++i) buffer[i] = i * 0x9E3779B97F4A7C15ull;  // touch every page
  std::atomic<uint64_t> sink{0};
  BandwidthResult r;
  r.buffer_bytes = n * sizeof(uint64_t);
  r.repetitions = repetitions;
  constexpr int64_t kChunk = 1 << 16;  // words per task
  const int64_t n_chunks = static_cast<int64_t>((n + kChunk - 1) / kChunk);
  for (int rep = 0; rep < repetitions; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    pool.parallel_for(n_chunks, 1, [&](int64_t c0, int64_t c1) {
      // Four independent accumulators keep several loads in flight.
      uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
      const size_t end = std::min(n, static_cast<size_t>(c1) * kChunk);
      size_t i = static_cast<size_t>(c0) * kChunk;
      for (; i + 4 <= end; i += 4) {
        a0 += buffer[i];
        a1 ^= buffer[i + 1];
        a2 += buffer[i + 2];
        a3 ^= buffer[i + 3];
      }
      for (; i < end; ++i) a0 += buffer[i];
      sink.fetch_add(a0 + a1 + a2 + a3, std::memory_order_relaxed);  // keeps the loads alive
    });
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.read_bytes_per_second = std::max(r.read_bytes_per_second, static_cast<double>(r.buffer_bytes) / s);
  }
  return r;
}

}  // namespace inferscope
