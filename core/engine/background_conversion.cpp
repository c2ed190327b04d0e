#include "core/engine/background_conversion.h"

#include <stdexcept>

#include "kernels/cpu/thread_pool.h"

namespace inferscope {

BackgroundConversion::BackgroundConversion(const LlamaModel& model, WeightQuant level, int32_t threads,
                                           ConversionProgressFn on_progress, std::function<void()> on_done)
    : level_(level),
      worker_([this, &model, threads, on_progress = std::move(on_progress), on_done = std::move(on_done)] {
        try {
          ThreadPool pool(threads);
          result_ = ConvertedWeights::convert(model, level_, pool, ConversionControl{on_progress, &cancel_});
        } catch (...) {
          error_ = std::current_exception();
        }
        done_.store(true, std::memory_order_release);
        if (on_done) on_done();
      }) {}

BackgroundConversion::~BackgroundConversion() {
  cancel_.store(true);
  worker_.join();
}

std::unique_ptr<ConvertedWeights> BackgroundConversion::take() {
  if (!done()) throw std::logic_error("BackgroundConversion::take before the conversion is done");
  if (error_) std::rethrow_exception(error_);
  return std::move(result_);
}

}  // namespace inferscope
