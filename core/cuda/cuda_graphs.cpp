#include "core/cuda/cuda_graphs.h"

#include <memory>
#include <type_traits>

#include "kernels/cuda/cuda_check.h"

namespace inferscope {
namespace {

struct GraphDeleter {
  void operator()(cudaGraph_t graph) const { cudaGraphDestroy(graph); }
};
using GraphPtr = std::unique_ptr<std::remove_pointer_t<cudaGraph_t>, GraphDeleter>;

// `enqueue`'s launches on `stream`, captured and instantiated.
cudaGraphExec_t capture(cudaStream_t stream, const std::function<void()>& enqueue) {
  // thread-local: only this thread's unsafe calls (allocation, synchronization) are refused meanwhile
  INFERSCOPE_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    enqueue();
  } catch (...) {
    // end the broken capture, so the stream runs work again, and drop what it recorded
    cudaGraph_t partial = nullptr;
    cudaStreamEndCapture(stream, &partial);
    if (partial != nullptr) cudaGraphDestroy(partial);
    throw;
  }
  cudaGraph_t raw = nullptr;
  INFERSCOPE_CUDA_CHECK(cudaStreamEndCapture(stream, &raw));
  const GraphPtr graph{raw};
  cudaGraphExec_t exec = nullptr;
  INFERSCOPE_CUDA_CHECK(cudaGraphInstantiate(&exec, graph.get(), 0));
  return exec;
}

}  // namespace

bool CudaGraphs::launch(const Key& key, cudaStream_t stream, const std::function<void()>& enqueue) {
  auto it = graphs_.find(key);
  if (it == graphs_.end()) {
    if (seen_.insert(key).second) {
      if (seen_.size() > kMaxGraphs) clear();
      return false;
    }
    if (graphs_.size() >= kMaxGraphs) clear();
    it = graphs_.emplace(key, capture(stream, enqueue)).first;
    seen_.erase(key);
    ++captures_;
  } else {
    ++replays_;
  }
  INFERSCOPE_CUDA_CHECK(cudaGraphLaunch(it->second, stream));
  return true;
}

void CudaGraphs::clear() {
  for (auto& [key, exec] : graphs_) cudaGraphExecDestroy(exec);
  graphs_.clear();
  seen_.clear();
}

}  // namespace inferscope
