// CUDA graphs of repeated steps (CudaForward's decode steps): the first step of a shape runs as it is
// (which also loads its kernels and sets their attributes outside any capture), the second is captured
// (its launches recorded on the stream, not run), instantiated and launched, and later steps of that
// shape replay the graph: one launch instead of hundreds. A graph bakes in every launch's parameters
// (buffer addresses, grid sizes, counts), so the key must name everything that sets those, what the
// launches read that changes from step to step must be copied to fixed device buffers before the
// launch, and the owner clears the cache when a buffer the launches use moves.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <vector>

namespace inferscope {

class CudaGraphs {
 public:
  using Key = std::vector<int64_t>;

  CudaGraphs() = default;
  CudaGraphs(const CudaGraphs&) = delete;
  CudaGraphs& operator=(const CudaGraphs&) = delete;
  ~CudaGraphs() { clear(); }

  // Launches the graph of `key` on `stream`, capturing `enqueue`'s launches into it first when this is
  // the key's second request. The first request launches nothing and returns false: the caller runs
  // the step uncaptured. `enqueue` must only queue work on `stream`: no allocation, no
  // synchronization, no copy from pageable host memory. Throws CudaError when capture or launch fails
  // (the partial graph is dropped).
  bool launch(const Key& key, cudaStream_t stream, const std::function<void()>& enqueue);
  void clear();  // every graph, and every key seen

  size_t captures() const { return captures_; }
  size_t replays() const { return replays_; }  // launches of a graph captured by an earlier step

 private:
  static constexpr size_t kMaxGraphs = 64;  // beyond this many shapes (graphs or keys seen) it starts over

  std::map<Key, cudaGraphExec_t> graphs_;
  std::set<Key> seen_;  // keys requested once, not captured yet
  size_t captures_ = 0, replays_ = 0;
};

}  // namespace inferscope
