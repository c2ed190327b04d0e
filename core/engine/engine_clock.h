// The time an engine runs on, in seconds since it started: the wall clock, or a virtual clock that
// only moves when told (serve-sim's dry run: steps cost their modelled time, idle gaps are skipped).
#pragma once
#include <algorithm>
#include <chrono>
#include <thread>

namespace inferscope {

class EngineClock {
 public:
  explicit EngineClock(bool virtual_time = false)
      : virtual_(virtual_time), start_(std::chrono::steady_clock::now()) {}
  bool is_virtual() const { return virtual_; }
  double now() const {
    return virtual_ ? now_ : std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  // A step took `seconds`: the virtual clock moves on; the wall clock has moved by itself.
  void advance(double seconds) {
    if (virtual_) now_ += seconds;
  }
  // Nothing to do until `t`: the virtual clock jumps there, the wall clock sleeps.
  void wait_until(double t) {
    if (virtual_) {
      now_ = std::max(now_, t);
    } else {
      std::this_thread::sleep_until(start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                 std::chrono::duration<double>(t)));
    }
  }

 private:
  bool virtual_;
  std::chrono::steady_clock::time_point start_;
  double now_ = 0;
};

}  // namespace inferscope
