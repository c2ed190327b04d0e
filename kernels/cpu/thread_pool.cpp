// Workers spin briefly after each job (the next matmul usually follows within microseconds), then
// sleep on a condition variable. A job is cut into fixed chunks that threads claim one at a time;
// the caller waits for the chunks, not for the workers, so a descheduled worker never holds it up.
#include "kernels/cpu/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace inferscope {
namespace {

// Polls before a waiting thread blocks: the first ones pause the core, the rest yield it (which
// matters when there are more threads than free cores).
constexpr int kPausePolls = 2000;
constexpr int kYieldPolls = 200;
// A job is cut into at most this many chunks per thread, so a slow thread does not hold up the rest.
constexpr int64_t kChunksPerThread = 4;
// Chunk indices and counts share the 16-bit fields of the claim word.
constexpr int64_t kMaxChunks = 0xFFFF;

void backoff(int poll) {
#if defined(__x86_64__) || defined(__i386__)
  if (poll < kPausePolls) {
    _mm_pause();
    return;
  }
#endif
  std::this_thread::yield();
}

using Fn = std::function<void(int64_t, int64_t)>;

// The pool whose job this thread is running (its workers always; a caller during parallel_for), so
// that a parallel_for nested inside a job runs inline instead of waiting for itself.
thread_local const void* tls_running_pool = nullptr;

}  // namespace

struct ThreadPool::Impl {
  std::vector<std::thread> workers;
  std::mutex mu;
  std::condition_variable wake;  // workers wait here for a new job (or stop)
  std::condition_variable done;  // the caller waits here for the last chunk
  std::mutex run_mu;             // one parallel_for at a time

  std::atomic<uint32_t> generation{0};  // bumped once per job
  std::atomic<int64_t> dispatches{0};   // jobs handed to the workers
  std::atomic<bool> stop{false};
  std::atomic<int> sleeping{0};
  std::atomic<bool> caller_waiting{false};

  // The current job. A worker reads these only after seeing the job's generation in `claim`, and
  // can start a chunk only while that generation is current, so a late worker never mixes two jobs.
  // The chunk count lives in the claim word itself: a worker that still holds the previous job's
  // claim can never pair it with the next job's count (which once let it run a phantom chunk).
  std::atomic<const Fn*> fn{nullptr};
  std::atomic<int64_t> n{0};
  std::atomic<uint64_t> claim{0};  // generation << 32 | chunk count << 16 | next unclaimed chunk
  std::atomic<int64_t> chunks_done{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;  // the first exception of the job, guarded by mu

  // Claims and runs chunks of job `gen` until none are left; chunk bounds depend only on n, n_chunks.
  void run_chunks(uint32_t gen) {
    for (;;) {
      uint64_t c = claim.load(std::memory_order_acquire);
      if (static_cast<uint32_t>(c >> 32) != gen) return;
      const int64_t count = static_cast<int64_t>((c >> 16) & 0xFFFF), chunk = static_cast<int64_t>(c & 0xFFFF);
      if (chunk >= count) return;
      const Fn* f = fn.load(std::memory_order_relaxed);
      const int64_t total = n.load(std::memory_order_relaxed);
      if (!claim.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel)) continue;
      if (!failed.load(std::memory_order_relaxed)) {
        try {
          (*f)(total * chunk / count, total * (chunk + 1) / count);
        } catch (...) {
          std::lock_guard<std::mutex> lock(mu);
          if (!error) error = std::current_exception();
          failed = true;
        }
      }
      // the last chunk wakes the caller if it went to sleep (it announces that before re-checking)
      if (chunks_done.fetch_add(1) + 1 == count && caller_waiting.load()) {
        std::lock_guard<std::mutex> lock(mu);
        done.notify_one();
      }
    }
  }

  void worker_loop() {
    tls_running_pool = this;
    uint32_t seen = 0;
    for (;;) {
      for (int i = 0; i < kPausePolls + kYieldPolls && generation.load() == seen && !stop.load(); ++i) backoff(i);
      if (generation.load() == seen && !stop.load()) {
        std::unique_lock<std::mutex> lock(mu);
        // announce the sleep before re-checking, so a caller that bumps generation sees us
        sleeping.fetch_add(1);
        wake.wait(lock, [&] { return generation.load() != seen || stop.load(); });
        sleeping.fetch_sub(1);
      }
      if (stop.load()) return;
      seen = generation.load();
      run_chunks(seen);
    }
  }
};

ThreadPool::ThreadPool(int n_threads) : impl_(new Impl) {
  n_threads = resolved_size(n_threads);
  for (int i = 1; i < n_threads; ++i) impl_->workers.emplace_back([this] { impl_->worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->wake.notify_all();
  for (auto& w : impl_->workers) w.join();
  delete impl_;
}

int ThreadPool::resolved_size(int n_threads) {
  return n_threads > 0 ? n_threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

int ThreadPool::size() const { return static_cast<int>(impl_->workers.size()) + 1; }

int64_t ThreadPool::dispatches() const { return impl_->dispatches.load(std::memory_order_relaxed); }

void ThreadPool::parallel_for(int64_t n, int64_t grain,
                              const std::function<void(int64_t begin, int64_t end)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t n_chunks = std::min<int64_t>({n / grain, kChunksPerThread * size(), kMaxChunks});
  if (n_chunks <= 1 || impl_->workers.empty() || tls_running_pool == impl_) {
    fn(0, n);
    return;
  }
  Impl& p = *impl_;
  std::lock_guard<std::mutex> run_lock(p.run_mu);
  p.dispatches.fetch_add(1, std::memory_order_relaxed);
  // restored on every exit, the rethrow below included (the caller may be another pool's worker)
  struct Mark {
    const void* previous = tls_running_pool;
    ~Mark() { tls_running_pool = previous; }
  } mark;
  tls_running_pool = impl_;
  const uint32_t gen = p.generation.load() + 1;
  p.fn.store(&fn, std::memory_order_relaxed);
  p.n.store(n, std::memory_order_relaxed);
  p.chunks_done = 0;
  p.failed = false;
  p.error = nullptr;
  // publishes the fields above
  p.claim.store(uint64_t{gen} << 32 | static_cast<uint64_t>(n_chunks) << 16, std::memory_order_release);
  p.generation.store(gen);
  // a worker that announced its sleep before the bump needs a notify; one that did not sees the bump
  if (p.sleeping.load() > 0) {
    std::lock_guard<std::mutex> lock(p.mu);
    p.wake.notify_all();
  }
  p.run_chunks(gen);
  for (int i = 0; i < kPausePolls + kYieldPolls && p.chunks_done.load() != n_chunks; ++i) backoff(i);
  if (p.chunks_done.load() != n_chunks) {
    std::unique_lock<std::mutex> lock(p.mu);
    p.caller_waiting = true;
    p.done.wait(lock, [&] { return p.chunks_done.load() == n_chunks; });
    p.caller_waiting = false;
  }
  if (p.error) std::rethrow_exception(p.error);
}

}  // namespace inferscope
