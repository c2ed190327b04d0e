#include "gui/remote/server_prober.h"

#include <mutex>
#include <thread>

namespace inferscope::gui {

struct ServerProber::Link {
  std::mutex mu;
  ServerProber* owner = nullptr;  // null once the prober is destroyed
};

ServerProber::ServerProber(QObject* parent) : QObject(parent), link_(std::make_shared<Link>()) { link_->owner = this; }

ServerProber::~ServerProber() {
  std::lock_guard lock(link_->mu);
  link_->owner = nullptr;
}

void ServerProber::probe(const RemoteEndpoint& endpoint, double timeout_s) {
  const uint64_t generation = ++generation_;
  std::thread([link = link_, endpoint, timeout_s, generation] {
    const ProbeReport report = probe_report(endpoint, timeout_s);
    // Posting under the lock: the destructor cannot run between the check and the post, and Qt drops
    // events posted to an object that is destroyed before they are delivered.
    std::lock_guard lock(link->mu);
    if (link->owner == nullptr) return;
    ServerProber* owner = link->owner;
    QMetaObject::invokeMethod(owner, [owner, generation, report] { owner->deliver(generation, report); }, Qt::QueuedConnection);
  }).detach();
}

void ServerProber::deliver(uint64_t generation, const ProbeReport& report) {
  if (generation != generation_) return;  // superseded or forgotten
  delivered_ = generation;
  emit finished(report);
}

}  // namespace inferscope::gui
