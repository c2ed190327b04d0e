#include "gui/compare/compare_runner.h"

#include <stdexcept>

namespace inferscope::gui {
namespace {

// What a side is, for an error: "configuration", "server" or "simulation".
const char* side_kind(const CompareSide& side) {
  if (std::holds_alternative<RemoteSide>(side)) return "server";
  return std::holds_alternative<SimulatedSide>(side) ? "simulation" : "configuration";
}

}  // namespace

CompareRunner::CompareRunner(QObject* parent) : QObject(parent) {}

CompareRunner::~CompareRunner() { cancel_ = true; }

bool CompareRunner::start(CompareJob job) {
  if (running_) return false;
  running_ = true;
  cancel_ = false;
  run_ = 0;
  done_ = 0;
  total_ = static_cast<int>(job.requests.size());
  worker_.post([this, job = std::move(job)] {
    WorkloadRunOptions options;
    options.sampling = job.sampling;
    options.cancel = &cancel_;
    options.on_progress = [this](int32_t done, int32_t total) {
      done_ = done;
      total_ = total;
    };
    auto comparison = std::make_shared<Comparison>();
    comparison->workload = job.workload;
    comparison->sampling = job.sampling;
    const auto run_side = [&](const CompareSide& side) {
      if (const auto* config = std::get_if<EngineConfig>(&side)) return run_workload(*job.model, *config, job.requests, options);
      if (const auto* simulated = std::get_if<SimulatedSide>(&side)) {
        return run_simulated_side(*job.model, *simulated, job.requests, options);
      }
      return run_remote_side(std::get<RemoteSide>(side), job.requests, job.sampling, &cancel_, options.on_progress);
    };
    QString error;
    try {
      comparison->a = run_side(job.a);
      if (!cancel_) {
        run_ = 1;
        done_ = 0;
        comparison->b = run_side(job.b);
      }
      comparison->outputs = pair_outputs(job.model.get(), comparison->a, comparison->b);
    } catch (const std::exception& e) {
      error = QString("%1 %2: %3").arg(side_kind(run_ == 0 ? job.a : job.b), run_ == 0 ? "A" : "B", e.what());
    }
    comparison->cancelled = cancel_;
    // Back on the GUI thread (dropped when the runner is gone).
    QMetaObject::invokeMethod(this, [this, comparison, error] {
      running_ = false;
      if (!error.isEmpty()) {
        emit failed(error);
      } else if (comparison->cancelled) {
        emit cancelled();
      } else {
        emit finished(comparison);
      }
    }, Qt::QueuedConnection);
  });
  return true;
}

void CompareRunner::cancel() {
  if (running_) cancel_ = true;
}

CompareRunner::Progress CompareRunner::progress() const { return {run_, done_, total_}; }

}  // namespace inferscope::gui
