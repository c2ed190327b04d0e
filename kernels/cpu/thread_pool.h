// A fixed pool of worker threads that runs one parallel job at a time (the caller's thread joins in).
#pragma once
#include <cstdint>
#include <functional>

namespace inferscope {

class ThreadPool {
 public:
  // n_threads counts the calling thread; 0 means std::thread::hardware_concurrency().
  explicit ThreadPool(int n_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const;
  // The size a pool built with n_threads has.
  static int resolved_size(int n_threads);

  // Runs fn(begin, end) over [0, n) split into contiguous chunks of at least `grain` items,
  // on all threads, and returns when every chunk is done. The split never changes the result
  // of a well-formed kernel: each item must be computed independently of the chunking.
  // An exception thrown by fn reaches the caller (the first one; the remaining chunks are skipped).
  // A parallel_for on the same pool from inside fn runs inline on the calling thread.
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t begin, int64_t end)>& fn);
  // parallel_for calls handed to the workers so far (each one a wake-up and a join); inline runs
  // are not counted.
  int64_t dispatches() const;

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace inferscope
