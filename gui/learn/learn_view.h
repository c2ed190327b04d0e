// The Learn tab: the guided experiments (resources/experiments/*.json) in a list; the chosen one's
// question, explanation and what to look at; Run runs it on the loaded model (off the GUI thread,
// with progress and cancel); then its narration with the measured numbers, its conclusion, its
// plots, and "Export report…" (Markdown with the plots as PNG files beside it). Each experiment keeps
// its finished result, marked in the list, until it is run again or the experiments are reloaded.
#pragma once
#include <QString>
#include <QStringList>
#include <QWidget>
#include <map>
#include <memory>
#include <vector>

#include "core/learn/experiment.h"
#include "core/learn/experiment_runner.h"

class QLabel;
class QListWidget;
class QProgressBar;
class QPushButton;
class QScrollArea;
class QSplitter;
class QTextBrowser;
class QTimer;
class QVBoxLayout;

namespace inferscope {
class LlamaModel;
}

namespace inferscope::gui {

class EngineBridge;
class LearnRunner;

class LearnView : public QWidget {
  Q_OBJECT
 public:
  LearnView(EngineBridge& bridge, QWidget* parent = nullptr);
  ~LearnView() override;

  // Loads every experiment file in `dir` (malformed ones are listed with their error).
  void load_experiments(const QString& dir);
  int experiment_count() const { return static_cast<int>(experiments_.size()); }
  // Selects the experiment whose id (file base name) is `id`; false when there is none.
  bool select_experiment(const QString& id);
  // Runs the selected experiment; false (with the reason in status_text()) when it cannot start.
  bool start();
  void cancel();
  bool running() const;
  // The selected experiment's finished result; null when it has none.
  const ExperimentResult* result() const;
  const Experiment* current() const;
  bool can_export() const;
  QString status_text() const;
  QString narration_text() const;  // the narration view as plain text
  QList<QWidget*> plot_widgets() const { return plots_; }
  // Scrolls the results so plot `index` (0-based) starts at the top; false when there is no such plot.
  bool show_plot(int index);
  // Writes DIR/ID.md and DIR/ID-N.png (one per plot); returns the report's path (throws on failure).
  QString export_report(const QString& dir) const;

 signals:
  void experiment_finished();

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  // A finished run of one experiment, and the model it ran on (its plots decode tokens with it).
  struct Finished {
    std::shared_ptr<const ExperimentResult> result;
    std::shared_ptr<const LlamaModel> model;
  };
  void show_experiment(int index);
  void show_result(const Experiment& e, const Finished& f);
  void set_status(const QString& text);
  void poll_progress();
  const Finished* finished(int index) const;
  void mark_finished(int index);
  // Gives the lesson text the height it needs, up to half the tab; the run and its results get the rest.
  void fit_intro();

  EngineBridge& bridge_;
  std::vector<std::shared_ptr<const Experiment>> experiments_;
  std::map<int, Finished> finished_;  // by row in the list
  int running_index_ = -1;            // the row being run, on running_model_
  std::shared_ptr<const LlamaModel> running_model_;
  LearnRunner* runner_;
  QListWidget* list_;
  QSplitter* lesson_split_;
  QTextBrowser *intro_, *narration_;
  QLabel* status_;
  QProgressBar* progress_;
  QPushButton *run_, *cancel_, *export_;
  QScrollArea* scroll_;
  QVBoxLayout* plots_layout_;
  QList<QWidget*> plots_;
  QTimer* poll_;
};

}  // namespace inferscope::gui
