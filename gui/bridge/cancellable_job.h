// A tab's long job off the GUI thread, one at a time (a comparison, a guided experiment): its code
// polls cancel_ and writes the progress atomics, which the tab's timer reads; its outcome comes back
// on the GUI thread as failed, cancelled or the subclass's own finished signal, never once the
// runner is gone.
#pragma once
#include <QObject>
#include <QString>
#include <atomic>
#include <functional>
#include <utility>

#include "gui/bridge/background_worker.h"

namespace inferscope::gui {

// Where a job is: which run (a side, an experiment's run), which repeat of how many, requests done of total.
struct JobProgress {
  int run = 0, repeat = 0, repeats = 1, done = 0, total = 0;
};

class CancellableJob : public QObject {
  Q_OBJECT
 public:
  explicit CancellableJob(QObject* parent = nullptr);
  ~CancellableJob() override;

  // Aborts the job in progress (cancelled follows).
  void cancel();
  bool running() const { return running_; }
  JobProgress progress() const { return {run_, repeat_, repeats_, done_, total_}; }

 signals:
  void failed(const QString& message);
  void cancelled();

 protected:
  // What a job's work ends with: its error ("" when none), whether it stopped for a cancel, and what
  // to do on the GUI thread when neither (emit the subclass's finished signal).
  struct Outcome {
    QString error;
    bool cancelled = false;
    std::function<void()> deliver;
  };
  static Outcome failure(QString error) { return {std::move(error), false, {}}; }
  // Runs `work` on the worker thread, the progress reset to `total` requests and `repeats` repeats;
  // false when a job is already running.
  bool launch(int total, int repeats, std::function<Outcome()> work);

  std::atomic<bool> cancel_{false};
  std::atomic<int> run_{0}, repeat_{0}, repeats_{1}, done_{0}, total_{0};

 private:
  bool running_ = false;
  BackgroundWorker worker_;  // last: joined first, while the flags above still exist
};

}  // namespace inferscope::gui
