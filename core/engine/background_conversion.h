// Converts a model's weights to another quantization level on a worker thread, so the engine keeps
// serving on its current weights meanwhile; the engine swaps the result in between steps.
#pragma once
#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "core/quant/converted_weights.h"

namespace inferscope {

class BackgroundConversion {
 public:
  // Starts at once. on_progress(fraction, tensor) and on_done() run on the worker thread.
  BackgroundConversion(const LlamaModel& model, WeightQuant level, int32_t threads, ConversionProgressFn on_progress,
                       std::function<void()> on_done);
  // Cancels a conversion still running and waits for the worker.
  ~BackgroundConversion();
  BackgroundConversion(const BackgroundConversion&) = delete;
  BackgroundConversion& operator=(const BackgroundConversion&) = delete;

  WeightQuant level() const { return level_; }
  bool done() const { return done_.load(std::memory_order_acquire); }
  // The converted weights once done(); rethrows the conversion's error.
  std::unique_ptr<ConvertedWeights> take();

 private:
  const WeightQuant level_;
  std::atomic<bool> cancel_{false}, done_{false};
  std::unique_ptr<ConvertedWeights> result_;
  std::exception_ptr error_;
  std::thread worker_;  // last: starts after everything above exists
};

}  // namespace inferscope
