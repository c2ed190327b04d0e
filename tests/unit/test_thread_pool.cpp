#include "kernels/cpu/thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace inferscope {
namespace {

using Chunks = std::vector<std::pair<int64_t, int64_t>>;

// The chunks one parallel_for hands out, sorted by start.
Chunks chunks_of(ThreadPool& pool, int64_t n, int64_t grain) {
  std::mutex mu;
  Chunks chunks;
  pool.parallel_for(n, grain, [&](int64_t b, int64_t e) {
    std::lock_guard<std::mutex> lock(mu);
    chunks.emplace_back(b, e);
  });
  std::sort(chunks.begin(), chunks.end());
  return chunks;
}

TEST(ThreadPool, SizeCountsTheCaller) {
  EXPECT_EQ(ThreadPool(1).size(), 1);
  EXPECT_EQ(ThreadPool(3).size(), 3);
  EXPECT_EQ(ThreadPool(0).size(), static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

TEST(ThreadPool, ChunksCoverEveryItemOnceAndRespectTheGrain) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    for (int64_t n : {1, 2, 5, 17, 100, 1000})
      for (int64_t grain : {1, 4, 64}) {
        const Chunks chunks = chunks_of(pool, n, grain);
        int64_t next = 0;
        for (const auto& [b, e] : chunks) {
          EXPECT_EQ(b, next) << "contiguous, no overlap";
          EXPECT_LT(b, e);
          if (chunks.size() > 1) {
            EXPECT_GE(e - b, grain);
          }
          next = e;
        }
        EXPECT_EQ(next, n) << threads << " threads, n " << n << ", grain " << grain;
        EXPECT_LE(static_cast<int64_t>(chunks.size()), std::max<int64_t>(1, n / grain));
      }
  }
}

TEST(ThreadPool, ChunkingIsDeterministic) {
  ThreadPool pool(3);
  const Chunks first = chunks_of(pool, 1000, 7);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(chunks_of(pool, 1000, 7), first);
}

TEST(ThreadPool, UsesSeveralThreads) {
  ThreadPool pool(2);
  std::mutex mu;
  std::vector<std::thread::id> ids;
  // each chunk waits a little so the other thread gets a chance to claim one
  pool.parallel_for(8, 1, [&](int64_t, int64_t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::lock_guard<std::mutex> lock(mu);
    ids.push_back(std::this_thread::get_id());
  });
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::unique(ids.begin(), ids.end()) - ids.begin(), 2);
}

TEST(ThreadPool, ManyBackToBackJobsAllComplete) {
  ThreadPool pool(3);
  std::vector<int64_t> out(97);
  for (int job = 0; job < 5000; ++job) {
    pool.parallel_for(97, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) out[i] = job + i;
    });
    ASSERT_EQ(out[0], job);
    ASSERT_EQ(out[96], job + 96);
  }
}

// Back-to-back jobs whose chunk counts differ: a worker still holding the previous job's claim must
// never run a chunk of it with the next job's count (a phantom chunk, calling a dead function).
TEST(ThreadPool, JobsWithDifferentChunkCountsNeverMix) {
  ThreadPool pool(3);
  for (int job = 0; job < 20000; ++job) {
    const int64_t n = job % 2 == 0 ? 2 : 12;  // 2 chunks, then 12
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    std::atomic<int> out_of_range{0};
    pool.parallel_for(n, 1, [&](int64_t b, int64_t e) {
      if (b < 0 || e > n || b >= e) out_of_range.fetch_add(1);
      for (int64_t i = std::max<int64_t>(b, 0); i < std::min(e, n); ++i) hits[static_cast<size_t>(i)].fetch_add(1);
    });
    ASSERT_EQ(out_of_range.load(), 0) << "job " << job;
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "job " << job << " item " << i;
  }
}

TEST(ThreadPool, WorkerExceptionReachesTheCallerAndThePoolSurvives) {
  ThreadPool pool(3);
  for (int attempt = 0; attempt < 10; ++attempt) {
    EXPECT_THROW(pool.parallel_for(64, 1,
                                   [](int64_t b, int64_t e) {
                                     if (b <= 40 && 40 < e) throw std::runtime_error("chunk with 40");
                                   }),
                 std::runtime_error);
    std::atomic<int64_t> sum{0};
    pool.parallel_for(64, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) sum += i;
    });
    EXPECT_EQ(sum.load(), 64 * 63 / 2);
  }
}

TEST(ThreadPool, ShutsDownCleanlyWhenWorkersSleep) {
  auto pool = std::make_unique<ThreadPool>(4);
  std::atomic<int> calls{0};
  pool->parallel_for(16, 1, [&](int64_t, int64_t) { ++calls; });
  // long enough for the workers to stop spinning and block
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  pool->parallel_for(16, 1, [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls.load(), 32);
  pool.reset();
}

TEST(ThreadPool, NestedParallelForRunsInline) {
  ThreadPool pool(2);
  std::vector<std::atomic<int>> hits(64);
  pool.parallel_for(8, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      pool.parallel_for(8, 1, [&](int64_t ib, int64_t ie) {
        for (int64_t j = ib; j < ie; ++j) ++hits[i * 8 + j];
      });
  });
  for (const auto& h : hits) EXPECT_EQ(h.load(), 1);
}

TEST(ThreadPool, EmptyRangeRunsNothing) {
  ThreadPool pool(2);
  bool called = false;
  pool.parallel_for(0, 1, [&](int64_t, int64_t) { called = true; });
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace inferscope
