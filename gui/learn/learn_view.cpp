#include "gui/learn/learn_view.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPixmap>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSplitter>
#include <QStyle>
#include <QTextBrowser>
#include <QTimer>
#include <QVBoxLayout>
#include <cmath>
#include <stdexcept>

#include "core/common/atomic_file.h"
#include "core/learn/experiment_report.h"
#include "core/model/llama_model.h"
#include "gui/bridge/engine_bridge.h"
#include "gui/learn/experiment_plots.h"
#include "gui/learn/learn_runner.h"

namespace inferscope::gui {
namespace {

QString html_paragraphs(const std::vector<std::string>& lines) {
  QString html;
  for (const std::string& line : lines) html += "<p>" + QString::fromStdString(line).toHtmlEscaped() + "</p>";
  return html;
}

}  // namespace

LearnView::LearnView(EngineBridge& bridge, QWidget* parent)
    : QWidget(parent), bridge_(bridge), runner_(new LearnRunner(this)), poll_(new QTimer(this)) {
  auto* split = new QSplitter(Qt::Horizontal, this);
  list_ = new QListWidget(split);
  list_->setObjectName("experiment_list");
  list_->setMaximumWidth(320);
  list_->setIconSize(QSize(14, 14));
  auto* right = new QWidget(split);
  auto* frame = new QVBoxLayout(right);
  // The lesson above, the run and its results below; fit_intro() gives the lesson the height it needs.
  lesson_split_ = new QSplitter(Qt::Vertical, right);
  lesson_split_->setObjectName("learn_splitter");
  lesson_split_->setChildrenCollapsible(false);
  intro_ = new QTextBrowser(lesson_split_);
  intro_->setObjectName("experiment_intro");
  auto* below = new QWidget(lesson_split_);
  frame->addWidget(lesson_split_);
  auto* column = new QVBoxLayout(below);
  column->setContentsMargins(0, 0, 0, 0);
  auto* buttons = new QHBoxLayout;
  run_ = new QPushButton(tr("Run experiment"), right);
  cancel_ = new QPushButton(tr("Cancel"), right);
  export_ = new QPushButton(tr("Export report…"), right);
  progress_ = new QProgressBar(right);
  status_ = new QLabel(right);
  status_->setObjectName("experiment_status");
  for (QWidget* w : {static_cast<QWidget*>(run_), static_cast<QWidget*>(cancel_), static_cast<QWidget*>(export_),
                     static_cast<QWidget*>(progress_), static_cast<QWidget*>(status_)}) {
    buttons->addWidget(w);
  }
  buttons->setStretch(4, 1);
  column->addLayout(buttons);
  // The results scroll: narration, conclusion, then the plots.
  scroll_ = new QScrollArea(right);
  scroll_->setWidgetResizable(true);
  scroll_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOn);
  auto* results = new QWidget(scroll_);
  plots_layout_ = new QVBoxLayout(results);
  narration_ = new QTextBrowser(results);
  narration_->setObjectName("experiment_narration");
  narration_->setMinimumHeight(200);
  plots_layout_->addWidget(narration_);
  plots_layout_->addStretch(1);
  scroll_->setWidget(results);
  column->addWidget(scroll_, 1);
  split->setStretchFactor(1, 1);
  auto* outer = new QHBoxLayout(this);
  outer->addWidget(split);

  cancel_->setEnabled(false);
  export_->setEnabled(false);
  progress_->setVisible(false);
  progress_->setTextVisible(false);  // the status beside it counts the requests
  connect(list_, &QListWidget::currentRowChanged, this, &LearnView::show_experiment);
  connect(run_, &QPushButton::clicked, this, [this] { start(); });
  connect(cancel_, &QPushButton::clicked, this, &LearnView::cancel);
  connect(export_, &QPushButton::clicked, this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Export the report to"));
    if (dir.isEmpty()) return;
    try {
      set_status(tr("report written: %1").arg(export_report(dir)));
    } catch (const std::exception& e) {
      set_status(QString::fromStdString(e.what()));
    }
  });
  poll_->setInterval(200);
  connect(poll_, &QTimer::timeout, this, &LearnView::poll_progress);
  connect(runner_, &LearnRunner::finished, this, [this](std::shared_ptr<const ExperimentResult> r) {
    finished_[running_index_] = Finished{std::move(r), running_model_};
    mark_finished(running_index_);
    show_experiment(running_index_);
    emit experiment_finished();
  });
  connect(runner_, &LearnRunner::failed, this, [this](const QString& message) {
    set_status(tr("failed: %1").arg(message));
    emit experiment_finished();
  });
  connect(runner_, &LearnRunner::cancelled, this, [this] {
    set_status(tr("cancelled"));
    emit experiment_finished();
  });
  connect(this, &LearnView::experiment_finished, this, [this] {
    running_model_.reset();
    poll_->stop();
    progress_->setVisible(false);
    run_->setEnabled(true);
    cancel_->setEnabled(false);
    list_->setEnabled(true);
  });
}

LearnView::~LearnView() = default;

bool LearnView::show_plot(int index) {
  if (index < 0 || index >= plots_.size()) return false;
  scroll_->widget()->adjustSize();  // lay the results out before reading the plot's position
  scroll_->verticalScrollBar()->setValue(plots_[index]->y());
  return true;
}

void LearnView::load_experiments(const QString& dir) {
  experiments_.clear();
  finished_.clear();
  list_->clear();
  const QStringList files = QDir(dir).entryList({"*.json"}, QDir::Files, QDir::Name);
  for (const QString& f : files) {
    const QString path = QDir(dir).filePath(f);
    try {
      experiments_.push_back(std::make_shared<const Experiment>(Experiment::load(path.toStdString())));
      // An empty icon until it has a result, so every title starts at the same place.
      QPixmap blank(list_->iconSize());
      blank.fill(Qt::transparent);
      list_->addItem(new QListWidgetItem(QIcon(blank), QString::fromStdString(experiments_.back()->title)));
    } catch (const std::exception& e) {
      set_status(QString::fromStdString(e.what()));
    }
  }
  if (!experiments_.empty()) list_->setCurrentRow(0);
}

bool LearnView::select_experiment(const QString& id) {
  for (size_t i = 0; i < experiments_.size(); ++i) {
    if (QString::fromStdString(experiments_[i]->id) == id) {
      list_->setCurrentRow(static_cast<int>(i));
      return true;
    }
  }
  return false;
}

const Experiment* LearnView::current() const {
  const int row = list_->currentRow();
  return row >= 0 && row < static_cast<int>(experiments_.size()) ? experiments_[static_cast<size_t>(row)].get() : nullptr;
}

void LearnView::show_experiment(int index) {
  if (index < 0 || index >= static_cast<int>(experiments_.size())) return;
  const Experiment& e = *experiments_[static_cast<size_t>(index)];
  QString html = "<h2>" + QString::fromStdString(e.title).toHtmlEscaped() + "</h2>";
  if (!e.question.empty()) html += "<p><i>" + QString::fromStdString(e.question).toHtmlEscaped() + "</i></p>";
  html += html_paragraphs(e.explain);
  if (!e.look_at.empty()) html += "<p><b>" + tr("Look at:") + "</b> " + QString::fromStdString(e.look_at).toHtmlEscaped() + "</p>";
  intro_->setHtml(html);
  fit_intro();
  if (const Finished* f = finished(index)) {
    show_result(e, *f);
    set_status(tr("done on %1; its result stays until you run it again").arg(QString::fromStdString(f->model->config().name)));
    return;
  }
  narration_->setHtml("<p>" + tr("Press <b>Run experiment</b>: it runs on the loaded model and fills in what it measured.") + "</p>");
  qDeleteAll(plots_);
  plots_.clear();
  export_->setEnabled(false);
  set_status(tr("not run yet"));
}

void LearnView::fit_intro() {
  const int total = lesson_split_->height() - lesson_split_->handleWidth();
  if (total <= 0) return;  // not laid out yet: showEvent() fits it
  // The text's height at the view's width, plus the view's frame.
  intro_->document()->setTextWidth(intro_->viewport()->width());
  const int wanted =
      static_cast<int>(std::ceil(intro_->document()->size().height())) + intro_->height() - intro_->viewport()->height();
  const int intro = std::min(wanted, total / 2);
  lesson_split_->setSizes({intro, total - intro});
}

void LearnView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  fit_intro();
}

const LearnView::Finished* LearnView::finished(int index) const {
  const auto it = finished_.find(index);
  return it == finished_.end() ? nullptr : &it->second;
}

const ExperimentResult* LearnView::result() const {
  const Finished* f = finished(list_->currentRow());
  return f ? f->result.get() : nullptr;
}

bool LearnView::can_export() const { return export_->isEnabled(); }

void LearnView::mark_finished(int index) {
  QListWidgetItem* item = list_->item(index);
  item->setIcon(style()->standardIcon(QStyle::SP_DialogApplyButton));
  item->setToolTip(tr("Run on %1: its result is kept until you run it again")
                       .arg(QString::fromStdString(finished_.at(index).model->config().name)));
}

bool LearnView::start() {
  const int row = list_->currentRow();
  if (runner_->running()) return false;
  if (row < 0 || row >= static_cast<int>(experiments_.size())) {
    set_status(tr("no experiment selected"));
    return false;
  }
  if (!bridge_.shared_model() || bridge_.busy()) {
    set_status(tr("load a model first"));
    return false;
  }
  running_index_ = row;
  running_model_ = bridge_.shared_model();
  runner_->start(experiments_[static_cast<size_t>(row)], running_model_, bridge_.config());
  run_->setEnabled(false);
  cancel_->setEnabled(true);
  list_->setEnabled(false);
  progress_->setVisible(true);
  poll_->start();
  set_status(tr("running on %1…").arg(QString::fromStdString(bridge_.model()->config().name)));
  return true;
}

void LearnView::cancel() { runner_->cancel(); }

bool LearnView::running() const { return runner_->running(); }

void LearnView::poll_progress() {
  const JobProgress p = runner_->progress();
  const Experiment* e = current();
  if (!e || p.run >= static_cast<int>(e->runs.size())) return;
  progress_->setRange(0, std::max(1, p.total));
  progress_->setValue(p.done);
  set_status(LearnRunner::progress_text(*e, p));
}

void LearnView::show_result(const Experiment& e, const Finished& f) {
  const ExperimentResult& result = *f.result;
  QString html = html_paragraphs(result.narration);
  if (!result.conclusion.empty()) {
    html += "<p style='background:#eef6ee; padding:6px'><b>" + tr("Conclusion.") + "</b> " +
            QString::fromStdString(result.conclusion).toHtmlEscaped() + "</p>";
  }
  narration_->setHtml(html);
  qDeleteAll(plots_);
  plots_.clear();
  for (size_t i = 0; i < e.plots.size(); ++i) {
    QWidget* w = make_experiment_plot(e.plots[i], result, *f.model, narration_->parentWidget());
    w->setObjectName(QString("learn_plot_%1").arg(i));
    plots_layout_->insertWidget(plots_layout_->count() - 1, w);
    plots_.push_back(w);
  }
  export_->setEnabled(true);
}

QString LearnView::status_text() const { return status_->text(); }

QString LearnView::narration_text() const { return narration_->toPlainText(); }

void LearnView::set_status(const QString& text) { status_->setText(text); }

QString LearnView::export_report(const QString& dir) const {
  const Finished* f = finished(list_->currentRow());
  if (!f) throw std::runtime_error("no results to export: run the experiment first");
  const Experiment& e = *current();
  const QString id = QString::fromStdString(e.id);
  std::vector<ReportImage> images;
  for (int i = 0; i < plots_.size(); ++i) {
    const QString name = QString("%1-%2.png").arg(id).arg(i + 1);
    const QString path = QDir(dir).filePath(name);
    // Temp file, then rename: a half-written PNG never carries the final name.
    const QString tmp = path + ".tmp.png";
    if (!plots_[i]->grab().save(tmp) || (QFile::exists(path) && !QFile::remove(path)) || !QFile::rename(tmp, path)) {
      throw std::runtime_error(path.toStdString() + ": cannot write the plot");
    }
    images.emplace_back(experiment_plot_caption(e.plots[static_cast<size_t>(i)]).toStdString(), name.toStdString());
  }
  const QString report = QDir(dir).filePath(id + ".md");
  write_file_atomically(report.toStdString(), experiment_markdown(e, *f->result, f->model->config().name, images));
  return report;
}

}  // namespace inferscope::gui
