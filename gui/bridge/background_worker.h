// One background thread that runs jobs in the order they were posted: loading a model, building or
// destroying an Engine, taking a KV snapshot. The GUI thread posts and never waits, except in the
// destructor, which finishes the queue and joins.
#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace inferscope::gui {

class BackgroundWorker {
 public:
  BackgroundWorker();
  ~BackgroundWorker();
  BackgroundWorker(const BackgroundWorker&) = delete;
  BackgroundWorker& operator=(const BackgroundWorker&) = delete;

  void post(std::function<void()> job);

 private:
  void run();

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts after the queue exists
};

}  // namespace inferscope::gui
