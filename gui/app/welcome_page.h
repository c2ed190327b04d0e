// What the window shows in place of its tabs until the first model is loaded: a few sentences on what
// a GGUF model is and which architectures run here, three ways to a model: "Open a GGUF file…",
// "Fetch the demo model" (scripts/fetch-model.sh through ModelFetch, only on that click, with a
// progress bar, Cancel, and the reason when it fails), and the recent models (a missing file is shown
// as missing and cannot be clicked); and "Connect to a server…" (a remote engine: llama-server, vLLM,
// SGLang). The page takes no drops itself: a .gguf file dropped on it
// reaches the window, which opens it.
#pragma once
#include <QStringList>
#include <QWidget>

class QLabel;
class QProgressBar;
class QPushButton;
class QVBoxLayout;

namespace inferscope::gui {

class ModelFetch;

class WelcomePage : public QWidget {
  Q_OBJECT
 public:
  // `demo_dest`: where "Fetch the demo model" writes (fetched_demo_model_path() in the workbench).
  explicit WelcomePage(QString demo_dest, QWidget* parent = nullptr);

  void set_recent(const QStringList& paths);
  // The recent entries' buttons, in order (disabled for a missing file).
  QList<QPushButton*> recent_buttons() const;
  QPushButton* open_button() const { return open_; }
  QPushButton* connect_button() const { return connect_; }
  QPushButton* fetch_button() const { return fetch_; }
  QPushButton* cancel_button() const { return cancel_; }
  QProgressBar* fetch_progress() const { return progress_; }
  // The line under the fetch button: progress, or why the fetch failed.
  QString fetch_message() const;
  bool fetching() const;

 signals:
  void open_file_requested();
  void connect_requested();
  void model_chosen(const QString& path);

 private:
  void start_fetch();
  void show_fetching(bool on);
  void show_progress(qint64 bytes, qint64 total);
  void on_failed(const QString& message);
  void show_message(const QString& text);  // hidden when empty

  QString demo_dest_;
  ModelFetch* fetch_job_;
  QPushButton *open_, *fetch_, *cancel_, *connect_;
  QProgressBar* progress_;
  QLabel* message_;
  QString stage_;
  qint64 bytes_ = 0, total_ = 0;  // the last progress the script reported
  QVBoxLayout* recent_layout_;
  QLabel* no_recent_;
};

}  // namespace inferscope::gui
