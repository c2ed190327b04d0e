// Checks servers off the GUI thread: each probe() runs probe_report() on a thread of its own and hands
// the report back to the GUI thread with a queued call. Only the newest probe's report is delivered;
// a superseded or forgotten probe is cancelled (its thread ends within 100 ms). The destructor cancels
// and joins every probing thread, so none outlives the prober (or the process).
#pragma once
#include <QObject>
#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "gui/remote/probe_report.h"

namespace inferscope::gui {

class ServerProber : public QObject {
  Q_OBJECT
 public:
  explicit ServerProber(QObject* parent = nullptr);
  ~ServerProber() override;

  // Starts checking `endpoint` (each request waits at most timeout_s); supersedes a running probe.
  void probe(const RemoteEndpoint& endpoint, double timeout_s);
  // Cancels the running probe and drops its report (its endpoint was edited away).
  void forget_pending();
  bool busy() const { return generation_ != delivered_; }

 signals:
  void finished(const inferscope::gui::ProbeReport& report);

 private:
  struct Job {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> cancel;
    std::shared_ptr<std::atomic<bool>> done;
  };
  void deliver(uint64_t generation, const ProbeReport& report);
  void cancel_jobs();
  void join_finished_jobs();

  std::vector<Job> jobs_;
  uint64_t generation_ = 0;  // of the newest probe (or forget_pending)
  uint64_t delivered_ = 0;   // of the newest report delivered
};

}  // namespace inferscope::gui
