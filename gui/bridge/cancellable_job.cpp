#include "gui/bridge/cancellable_job.h"

#include <utility>

namespace inferscope::gui {

CancellableJob::CancellableJob(QObject* parent) : QObject(parent) {}

CancellableJob::~CancellableJob() { cancel_ = true; }

void CancellableJob::cancel() {
  if (running_) cancel_ = true;
}

bool CancellableJob::launch(int total, int repeats, std::function<Outcome()> work) {
  if (running_) return false;
  running_ = true;
  cancel_ = false;
  run_ = repeat_ = done_ = 0;
  repeats_ = repeats;
  total_ = total;
  worker_.post([this, work = std::move(work)] {
    Outcome outcome = work();
    // Back on the GUI thread (dropped when the runner is gone).
    QMetaObject::invokeMethod(this, [this, outcome = std::move(outcome)] {
      running_ = false;
      if (!outcome.error.isEmpty()) {
        emit failed(outcome.error);
      } else if (outcome.cancelled) {
        emit cancelled();
      } else {
        outcome.deliver();
      }
    }, Qt::QueuedConnection);
  });
  return true;
}

}  // namespace inferscope::gui
