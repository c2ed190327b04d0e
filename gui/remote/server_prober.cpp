#include "gui/remote/server_prober.h"

namespace inferscope::gui {

ServerProber::ServerProber(QObject* parent) : QObject(parent) {}

ServerProber::~ServerProber() {
  cancel_jobs();
  // Joined before QObject's destructor: a report a thread posts meanwhile is dropped with the object.
  for (Job& job : jobs_) job.thread.join();
}

void ServerProber::probe(const RemoteEndpoint& endpoint, double timeout_s) {
  cancel_jobs();
  join_finished_jobs();
  const uint64_t generation = ++generation_;
  Job job{{}, std::make_shared<std::atomic<bool>>(false), std::make_shared<std::atomic<bool>>(false)};
  job.thread = std::thread([this, endpoint, timeout_s, generation, cancel = job.cancel, done = job.done] {
    const ProbeReport report = probe_report(endpoint, timeout_s, cancel.get());
    QMetaObject::invokeMethod(this, [this, generation, report] { deliver(generation, report); }, Qt::QueuedConnection);
    done->store(true);
  });
  jobs_.push_back(std::move(job));
}

void ServerProber::forget_pending() {
  cancel_jobs();
  delivered_ = ++generation_;
}

void ServerProber::cancel_jobs() {
  for (Job& job : jobs_) job.cancel->store(true);
}

void ServerProber::join_finished_jobs() {
  std::erase_if(jobs_, [](Job& job) {
    if (!job.done->load()) return false;
    job.thread.join();  // past its last step: returns at once
    return true;
  });
}

void ServerProber::deliver(uint64_t generation, const ProbeReport& report) {
  if (generation != generation_) return;  // superseded or forgotten
  delivered_ = generation;
  emit finished(report);
}

}  // namespace inferscope::gui
