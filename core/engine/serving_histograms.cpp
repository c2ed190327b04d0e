#include "core/engine/serving_histograms.h"

#include <algorithm>

namespace inferscope {

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds(std::move(upper_bounds)), counts(bounds.size() + 1, 0) {}

void Histogram::observe(double value) {
  const auto bucket = std::lower_bound(bounds.begin(), bounds.end(), value) - bounds.begin();  // le: bound >= value
  ++counts[static_cast<size_t>(bucket)];
  sum += value;
  ++count;
}

namespace {

// vLLM's bucket bounds (vllm/v1/metrics/loggers.py).
std::vector<double> ttft_bounds() {
  return {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
          160.0, 640.0, 2560.0};
}
std::vector<double> itl_bounds() {
  return {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0};
}
std::vector<double> request_bounds() {
  return {0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0,
          1920.0, 7680.0};
}

}  // namespace

ServingHistograms::ServingHistograms()
    : time_to_first_token(ttft_bounds()),
      inter_token_latency(itl_bounds()),
      e2e_request_latency(request_bounds()),
      request_queue_time(request_bounds()),
      request_prefill_time(request_bounds()),
      request_decode_time(request_bounds()) {}

}  // namespace inferscope
