#include "core/remote/request_end_spread.h"

#include <algorithm>

namespace inferscope {

void RequestEndSpread::add(double tokens, double seconds) {
  if (tokens <= 0) return;
  batches_.push_back({tokens, seconds > 0 ? tokens / seconds : 0});
}

double RequestEndSpread::take(double seconds) {
  double out = 0;
  for (Batch& b : batches_) {
    const double now = b.tokens_per_second > 0 ? std::min(b.tokens_left, b.tokens_per_second * std::max(seconds, 0.0)) : b.tokens_left;
    b.tokens_left -= now;
    out += now;
  }
  std::erase_if(batches_, [](const Batch& b) { return b.tokens_left <= 0; });
  return out;
}

double RequestEndSpread::pending() const {
  double sum = 0;
  for (const Batch& b : batches_) sum += b.tokens_left;
  return sum;
}

}  // namespace inferscope
