// Checks servers off the GUI thread: each probe() runs probe_report() on its own detached thread and
// hands the report back to the GUI thread with a queued call. Only the newest probe's report is
// delivered; destroying the prober mid-probe is safe (the thread finds it gone and drops the report).
#pragma once
#include <QObject>
#include <cstdint>
#include <memory>

#include "gui/remote/probe_report.h"

namespace inferscope::gui {

class ServerProber : public QObject {
  Q_OBJECT
 public:
  explicit ServerProber(QObject* parent = nullptr);
  ~ServerProber() override;

  // Starts checking `endpoint` (each request waits at most timeout_s); supersedes a running probe.
  void probe(const RemoteEndpoint& endpoint, double timeout_s);
  // Drops the running probe's report (its endpoint was edited away).
  void forget_pending() { delivered_ = ++generation_; }
  bool busy() const { return generation_ != delivered_; }

 signals:
  void finished(const inferscope::gui::ProbeReport& report);

 private:
  struct Link;  // the prober as the probing threads see it
  void deliver(uint64_t generation, const ProbeReport& report);

  std::shared_ptr<Link> link_;
  uint64_t generation_ = 0;  // of the newest probe (or forget_pending)
  uint64_t delivered_ = 0;   // of the newest report delivered
};

}  // namespace inferscope::gui
