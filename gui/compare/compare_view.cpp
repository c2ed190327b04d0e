#include "gui/compare/compare_view.h"

#include <QBuffer>
#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollBar>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableWidget>
#include <QTextBrowser>
#include <QVBoxLayout>
#include <nlohmann/json.hpp>

#include "core/engine/setting_table.h"
#include "core/remote/server_report.h"
#include "core/workload/workload_summary.h"
#include "gui/bridge/engine_bridge.h"
#include "gui/chat/chat_panel.h"
#include "gui/compare/compare_render.h"
#include "gui/compare/compare_runner.h"
#include "gui/compare/compare_workload.h"
#include "gui/compare/device_picker.h"
#include "gui/compare/server_side_editor.h"
#include "gui/dashboard/metrics_dashboard.h"
#include "gui/plot/plot_export.h"
#include "gui/plot/vertical_scroll.h"

namespace inferscope::gui {
namespace {

const char* const kColourA = "#1d4ed8";
const char* const kColourB = "#c2410c";

// The runs-on choices, in the combo's order.
enum RunsOn { kLocal = 0, kServer = 1, kSimulated = 2 };

// Which configuration changes can change a greedy output, for the outputs pane (outputs_must_match).
const char* const kDivergenceNote =
    "Exact features (KV layout paged/contiguous, block size, KV budget, prefix cache, scheduler and its limits, "
    "thread count, speculative decoding) give bit-identical logits, so greedy outputs are identical; attention "
    "naive vs flash sums in another order, and quantized weights or q8 KV change the numbers, so those may diverge. "
    "Speculation is exact for greedy runs like these; with sampling it keeps the target's distribution, not its text.";

// A compact editor: the toggles in two label/field column pairs, explanations as tooltips.
QWidget* editor(ConfigFields& fields) {
  auto* widget = new QWidget;
  auto* grid = new QGridLayout(widget);
  grid->setContentsMargins(0, 0, 0, 0);
  grid->setHorizontalSpacing(8);
  grid->setVerticalSpacing(3);
  const std::vector<ConfigFields::Row> rows = fields.rows();
  const int per_column = static_cast<int>(rows.size() + 1) / 2;
  for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
    const ConfigFields::Row& row = rows[static_cast<size_t>(i)];
    auto* label = new QLabel(row.label);
    label->setStyleSheet("font-weight:normal; color:#374151;");
    label->setToolTip(row.tooltip);
    row.field->setToolTip(row.tooltip);
    // Not the bold title; no colour either, which would draw a disabled field (contiguous: block size) as enabled.
    row.field->setStyleSheet("font-weight:normal;");
    const int column = i / per_column * 2;
    grid->addWidget(label, i % per_column, column);
    grid->addWidget(row.field, i % per_column, column + 1);
  }
  grid->setColumnStretch(1, 1);
  grid->setColumnStretch(3, 1);
  return widget;
}

}  // namespace

CompareView::CompareView(EngineBridge& bridge, ChatPanel& chat, QWidget* parent)
    : QWidget(parent),
      bridge_(bridge),
      chat_(chat),
      runner_(new CompareRunner(this)),
      runs_on_a_(new QComboBox),
      runs_on_b_(new QComboBox),
      stack_a_(new QStackedWidget),
      stack_b_(new QStackedWidget),
      server_a_(new ServerSideEditor),
      server_b_(new ServerSideEditor),
      device_a_(new DevicePicker(builtin_devices())),
      device_b_(new DevicePicker(builtin_devices())),
      workload_(new QComboBox),
      run_to_length_(new QCheckBox("run each request to its output_tokens")),
      runs_(new QSpinBox),
      workload_about_(new QLabel),
      run_(new QPushButton("Run A, then B")),
      cancel_(new QPushButton("Cancel")),
      browse_(new QPushButton("JSON file…")),
      export_(new QPushButton("Export…")),
      progress_(new QProgressBar),
      status_(new QLabel),
      headline_(new QLabel),
      attribution_(new QLabel),
      deltas_(new QTableWidget),
      outputs_(new QTextBrowser),
      dashboard_(new MetricsDashboard),
      results_(nullptr) {
  a_.name_widgets("a_");
  b_.name_widgets("b_");
  server_a_->name_widgets("a_");
  server_b_->name_widgets("b_");
  device_a_->name_widgets("a_");
  device_b_->name_widgets("b_");
  runs_on_a_->setObjectName("a_runs_on");
  runs_on_b_->setObjectName("b_runs_on");
  workload_->setObjectName("workload");
  deltas_->setObjectName("deltas");
  outputs_->setObjectName("outputs");

  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(build_setup());
  split->addWidget(build_results());
  split->setStretchFactor(0, 0);
  split->setStretchFactor(1, 1);
  // Three sevenths of the height for the setup (its sides scroll below that), the rest for the results.
  split->setSizes({300, 400});
  split->setChildrenCollapsible(false);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(split);

  a_.on_change(this, [this] {
    a_.refresh_enabled();
    refresh_attribution();
  });
  b_.on_change(this, [this] {
    b_.refresh_enabled();
    refresh_attribution();
  });
  connect(run_, &QPushButton::clicked, this, [this] { start(); });
  connect(cancel_, &QPushButton::clicked, this, &CompareView::cancel);
  connect(browse_, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, "Choose a workload", {}, "Workloads (*.json);;All files (*)");
    if (!path.isEmpty()) use_workload_file(path);
  });
  connect(export_, &QPushButton::clicked, this, &CompareView::export_dialog);
  connect(workload_, &QComboBox::currentIndexChanged, this, [this] {
    refresh_workload_description();
    refresh_controls();
  });
  connect(runner_, &CompareRunner::finished, this, [this](std::shared_ptr<const Comparison> c) {
    show_result(std::move(c));
    emit run_ended();
  });
  // A run that does not finish puts the previous result back.
  connect(runner_, &CompareRunner::cancelled, this, [this] {
    display_result();
    show_status(result_ ? "Cancelled; the previous result is shown again." : "Cancelled.");
    refresh_controls();
    emit run_ended();
  });
  connect(runner_, &CompareRunner::failed, this, [this](const QString& message) {
    display_result();
    show_status(message, true);
    refresh_controls();
    emit run_ended();
  });
  poll_.setInterval(100);
  connect(&poll_, &QTimer::timeout, this, &CompareView::poll_progress);
  reset_configs(bridge_.config());
  refresh_workload_description();
  display_result();
  show_status("Pick two configurations and a workload, then run. Both runs use greedy sampling with the same seed.");
  refresh_controls();
}

CompareView::~CompareView() = default;

QWidget* CompareView::build_setup() {
  workload_->addItem("current chat session (last user turn)", QString());
  for (const QString& path : builtin_workloads()) workload_->addItem(QFileInfo(path).fileName() + "  (built-in)", path);
  workload_->setToolTip("The requests both configurations serve: the current chat's conversation as one request, or a "
                        "workload file (arrival times, prompts, output lengths; see resources/workloads)");
  run_to_length_->setChecked(true);
  run_to_length_->setToolTip("Every workload request generates exactly its output_tokens (SamplingParams::ignore_eos), "
                             "so both runs do the same work; the chat stops at the end of the reply");
  runs_->setObjectName("runs_per_side");
  runs_->setRange(1, 10);
  runs_->setValue(3);
  runs_->setSuffix(" runs each");
  runs_->setToolTip("How many times each side runs (A, B, A, B, …). A figure moves by several percent from one run to "
                    "the next; the table shows each figure's median and colours a change only when every run of B "
                    "lies beyond every run of A. A simulated side runs once: a dry run gives the same figures every time.");
  workload_about_->setObjectName("workload_description");
  workload_about_->setWordWrap(true);
  workload_about_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  run_->setDefault(true);
  run_->setStyleSheet("font-weight:bold; padding:4px 14px;");
  progress_->setObjectName("compare_progress");
  progress_->setTextVisible(false);  // the line under it says where the run is: text over the fill's edge is hard to read
  progress_->setValue(0);
  status_->setWordWrap(true);
  status_->setObjectName("compare_status");
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  // Under both sides, across their width: beside them it widened the tab past a 1280-pixel screen.
  auto* run_box = new QGroupBox("Workload and run");
  auto* column = new QVBoxLayout(run_box);
  auto* source = new QHBoxLayout;
  source->addWidget(workload_, 1);
  source->addWidget(browse_);
  source->addWidget(run_to_length_);
  column->addLayout(source);
  column->addWidget(workload_about_);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(runs_);
  buttons->addWidget(run_);
  buttons->addWidget(cancel_);
  buttons->addWidget(progress_, 1);
  buttons->addWidget(export_);
  column->addLayout(buttons);
  column->addWidget(status_);

  attribution_->setObjectName("compare_attribution");
  attribution_->setWordWrap(true);
  attribution_->setTextFormat(Qt::RichText);
  attribution_->setStyleSheet("padding:3px 6px; background:#f9fafb; border:1px solid #e5e7eb;");
  attribution_->setToolTip("A comparison says what one setting does only when A and B differ in that setting alone");

  auto* sides = new QWidget;
  auto* grid = new QGridLayout(sides);
  grid->setContentsMargins(0, 0, 0, 0);
  grid->addWidget(build_side(0), 0, 0);
  grid->addWidget(build_side(1), 0, 1);
  grid->addWidget(attribution_, 1, 0, 1, 2);
  for (int i = 0; i < 2; ++i) grid->setColumnStretch(i, 1);
  // On a short screen the sides scroll; the run controls below them always show.
  QScrollArea* scroll = vertical_scroll(sides);
  scroll->setMinimumWidth(sides->minimumSizeHint().width() + scroll->verticalScrollBar()->sizeHint().width());
  auto* setup = new QWidget;
  auto* rows = new QVBoxLayout(setup);
  rows->setContentsMargins(0, 0, 0, 0);
  rows->addWidget(scroll, 1);
  rows->addWidget(run_box);
  return setup;
}

QWidget* CompareView::build_side(int side) {
  const bool a = side == 0;
  auto* box = new QGroupBox(a ? "Side A" : "Side B");
  box->setStyleSheet(QString("QGroupBox { font-weight:bold; color:%1; }").arg(a ? kColourA : kColourB));
  QComboBox* runs_on = a ? runs_on_a_ : runs_on_b_;
  QStackedWidget* stack = a ? stack_a_ : stack_b_;
  DevicePicker* device = a ? device_a_ : device_b_;
  runs_on->addItems({"Local engine", "Server", "Simulated device"});
  runs_on->setToolTip("Run this side on the workbench's engine with the configuration below, replay the same "
                      "requests against an OpenAI-compatible server (llama-server, vLLM, SGLang), or simulate the "
                      "configuration below on a device model (a dry run priced on its roofline, not a measurement)");
  runs_on->setStyleSheet("font-weight:normal;");
  // A simulated side runs the local configuration: the device picker sits above the same editor.
  auto* local = new QWidget;
  auto* local_column = new QVBoxLayout(local);
  local_column->setContentsMargins(0, 0, 0, 0);
  local_column->addWidget(device);
  local_column->addWidget(editor(a ? a_ : b_), 1);
  device->setVisible(false);
  stack->addWidget(local);
  stack->addWidget(a ? server_a_ : server_b_);
  stack->setStyleSheet("font-weight:normal;");  // no colour: a disabled field must still draw greyed
  auto* column = new QVBoxLayout(box);
  column->setSpacing(4);
  auto* choice = new QHBoxLayout;
  auto* label = new QLabel("runs on");
  label->setStyleSheet("font-weight:normal; color:#374151;");
  choice->addWidget(label);
  choice->addWidget(runs_on, 1);
  column->addLayout(choice);
  column->addWidget(stack, 1);
  connect(runs_on, &QComboBox::currentIndexChanged, this, [this, stack, device](int index) {
    stack->setCurrentIndex(index == kServer ? 1 : 0);
    device->setVisible(index == kSimulated);
    refresh_attribution();
  });
  connect(device->combo(), &QComboBox::currentIndexChanged, this, &CompareView::refresh_attribution);
  return box;
}

void CompareView::set_on_server(int side, bool on) {
  (side == 0 ? runs_on_a_ : runs_on_b_)->setCurrentIndex(on ? kServer : kLocal);
}

bool CompareView::on_server(int side) const { return (side == 0 ? runs_on_a_ : runs_on_b_)->currentIndex() == kServer; }

bool CompareView::set_simulated(int side, const QString& device_file) {
  if (!device_picker(side)->select(device_file)) return false;
  (side == 0 ? runs_on_a_ : runs_on_b_)->setCurrentIndex(kSimulated);
  return true;
}

bool CompareView::simulated(int side) const { return (side == 0 ? runs_on_a_ : runs_on_b_)->currentIndex() == kSimulated; }

bool CompareView::side_of(int side, CompareSide& out, QString* error) const {
  const EngineConfig config = side == 0 ? config_a() : config_b();
  if (simulated(side)) {
    const std::optional<DeviceProfile> device = device_picker(side)->device(error);
    if (!device) {
      *error = QString("Simulated device %1: %2.").arg(side == 0 ? "A" : "B", *error);
      return false;
    }
    out = SimulatedSide{config, *device};
    return true;
  }
  if (!on_server(side)) {
    out = config;
    return true;
  }
  const std::optional<RemoteSide> remote = server_editor(side)->side(error);
  if (!remote) {
    *error = QString("Server %1: %2.").arg(side == 0 ? "A" : "B", *error);
    return false;
  }
  out = *remote;
  return true;
}

QString CompareView::side_label(int side) const {
  if (on_server(side)) {
    QString ignored;
    const std::optional<RemoteSide> remote = server_editor(side)->side(&ignored);
    return remote ? QString::fromStdString(remote_source(remote->endpoint, remote->server)) : QString("a server");
  }
  if (simulated(side)) return "a simulated " + QString::fromStdString(device_picker(side)->device_name()) + " (dry run)";
  const std::shared_ptr<const LlamaModel> model = bridge_.shared_model();
  return "the local engine" + (model ? " (" + QString::fromStdString(model->config().name) + ")" : QString());
}

QWidget* CompareView::build_results() {
  headline_->setWordWrap(true);
  headline_->setTextFormat(Qt::RichText);
  headline_->setObjectName("compare_headline");
  headline_->setStyleSheet("padding:4px; background:#f9fafb; border:1px solid #e5e7eb;");
  deltas_->verticalHeader()->setVisible(false);
  deltas_->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
  deltas_->setAlternatingRowColors(true);
  deltas_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  deltas_->setToolTip("Each figure of run A and run B (B − A, and B's change relative to A): green where B is better, "
                      "red where worse; figures with no better direction on their own stay plain (hover for why)");
  outputs_->setOpenLinks(false);
  outputs_->setToolTip(kDivergenceNote);

  auto* left = new QSplitter(Qt::Vertical);
  left->addWidget(deltas_);
  left->addWidget(outputs_);
  left->setSizes({300, 300});
  auto* body = new QSplitter(Qt::Horizontal);
  body->addWidget(left);
  body->addWidget(vertical_scroll(dashboard_));
  body->setStretchFactor(0, 2);
  body->setStretchFactor(1, 3);
  body->setSizes({640, 960});

  results_ = new QWidget;
  auto* layout = new QVBoxLayout(results_);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(headline_);
  layout->addWidget(body, 1);
  return results_;
}

void CompareView::reset_configs(const EngineConfig& config) {
  EngineConfig b = config;
  b.kv.kind = KvKind::Contiguous;
  set_configs(config, b);
}

void CompareView::set_configs(const EngineConfig& a, const EngineConfig& b) {
  a_.show(a);
  b_.show(b);
  refresh_attribution();
}

void CompareView::refresh_attribution() {
  // Settings tell a difference apart only between two local configurations.
  // A simulated side runs on its device; the others on this machine.
  const auto device = [this](int side) { return simulated(side) ? device_picker(side)->device_name() : std::string(); };
  const QString html = on_server(0) || on_server(1) ? QString() : attribution_html(config_a(), config_b(), device(0) == device(1));
  attribution_->setText(html);
  // Once a result's headline says the same, the setup does not say it a second time.
  attribution_->setVisible(!html.isEmpty() && !(result_ && !running() && html == result_attribution()));
}

QString CompareView::result_attribution() const {
  if (ran_on_server(result_->a) || ran_on_server(result_->b)) return {};
  return attribution_html(result_->a.config, result_->b.config, result_->a.simulated_on == result_->b.simulated_on);
}

EngineConfig CompareView::config_a() const { return a_.read(bridge_.config()); }
EngineConfig CompareView::config_b() const { return b_.read(bridge_.config()); }

void CompareView::use_chat_workload() { workload_->setCurrentIndex(0); }

void CompareView::use_workload_file(const QString& path) {
  const QString absolute = QFileInfo(path).absoluteFilePath();
  for (int i = 1; i < workload_->count(); ++i) {
    if (QFileInfo(workload_->itemData(i).toString()).absoluteFilePath() == absolute) return workload_->setCurrentIndex(i);
  }
  workload_->addItem(QFileInfo(path).fileName(), path);
  workload_->setCurrentIndex(workload_->count() - 1);
}

void CompareView::set_run_to_output_tokens(bool on) { run_to_length_->setChecked(on); }

void CompareView::set_runs_per_side(int runs) { runs_->setValue(runs); }

QString CompareView::workload_description() const { return workload_about_->text(); }

void CompareView::refresh_workload_description() {
  const QString path = workload_->currentData().toString();
  workload_about_->setStyleSheet("color:#4b5563;");
  if (path.isEmpty()) {
    workload_about_->setText("The current chat session: its conversation up to the last user turn, rendered with the "
                             "model's chat template, as one request of up to the session's max tokens. A and B redo "
                             "that reply, an answer to read.");
    return;
  }
  try {
    const Workload workload = load_workload(path.toStdString());
    const QString about = QString::fromStdString(describe_workload(workload));
    workload_about_->setText(workload.description.empty() ? about : QString::fromStdString(workload.description) + " " + about);
  } catch (const std::exception& e) {
    workload_about_->setStyleSheet("color:#b91c1c;");
    workload_about_->setText(QString("Cannot read this workload: ") + e.what());
  }
}

bool CompareView::running() const { return runner_->running(); }

bool CompareView::start() {
  if (running()) return false;
  CompareJob job;
  QString error;
  if (!side_of(0, job.a, &error) || !side_of(1, job.b, &error)) {
    show_status(error, true);
    return false;
  }
  job.model = bridge_.shared_model();
  const bool local_side = !on_server(0) || !on_server(1);
  if (!job.model && local_side) {
    show_status("Open a model first: a local side runs on the loaded model, and a simulated side takes its shapes.", true);
    return false;
  }
  // Greedy with the same seed for both: any difference in the outputs comes from the sides.
  job.sampling = SamplingParams{};
  const QString path = workload_->currentData().toString();
  try {
    if (path.isEmpty()) {
      if (!job.model) throw std::runtime_error("the chat is rendered with the loaded model's template: open a model, or pick a workload file");
      if (chat_.current_index() < 0) throw std::runtime_error("there is no chat session");
      const ChatSession& s = chat_.session(chat_.current_index());
      job.requests = chat_requests(*job.model, s.chat_messages(), s.max_tokens);
      job.workload = "chat: " + s.name;
    } else {
      const Workload workload = load_workload(path.toStdString());
      job.requests = job.model ? file_requests(*job.model, workload) : server_file_requests(workload, path.toStdString());
      job.synthetic_prompts = synthetic_prompt_ids(workload);
      job.workload = QFileInfo(path).fileName().toStdString();
      job.sampling.ignore_eos = run_to_length_->isChecked();
    }
  } catch (const std::exception& e) {
    show_status(QString("Cannot build the workload: ") + e.what(), true);
    return false;
  }
  job.runs_per_side = runs_->value();
  chat_busy_polls_ = 0;
  runner_->start(std::move(job));
  // The shown result is not this run's: it goes until this run ends.
  display_result();
  poll_.start();
  poll_progress();
  refresh_controls();
  return true;
}

void CompareView::cancel() {
  runner_->cancel();
  if (running()) show_status("Cancelling…");
}

void CompareView::poll_progress() {
  if (!running()) {
    poll_.stop();
    return;
  }
  const JobProgress p = runner_->progress();
  // Every run of every side counts its requests once.
  const int total = std::max(1, p.total), runs = 2 * p.repeats;
  progress_->setRange(0, runs * total);
  progress_->setValue((2 * p.repeat + p.run) * total + p.done);
  const QString side = p.run == 0 ? "A" : "B";
  const QString which = p.repeats > 1 ? QString("%1, run %2 of %3").arg(side).arg(p.repeat + 1).arg(p.repeats) : side;
  if (chat_.requests_in_flight() > 0) ++chat_busy_polls_;
  QString text = QString("Running side %1 on %2 (greedy, same seed): %3 of %4 requests done…")
                     .arg(which, side_label(p.run))
                     .arg(p.done)
                     .arg(p.total);
  if (chat_busy_polls_ > 0) {
    text += " Chat replies are streaming too: they share the CPU cores with this run, so its timings are not a clean A/B.";
  }
  show_status(text);
}

void CompareView::show_result(std::shared_ptr<const Comparison> c) {
  result_ = std::move(c);
  poll_.stop();
  display_result();
  progress_->setRange(0, 1);
  progress_->setValue(1);
  const int runs = result_->runs_per_side();
  QString text = runs > 1 ? QString("Done: %1 runs per side; the table shows each figure's median. B's changes are green "
                                    "where better and red where worse when every run of B lies beyond every run of A; "
                                    "plain within the run-to-run spread (hover for it) or where a figure alone says "
                                    "neither.")
                                .arg(runs)
                          : QString("Done: one run per side, which measures no run-to-run spread, so no change is "
                                    "coloured; run each side two or more times to tell a change from noise.");
  for (const auto& [r, name] : {std::pair{&result_->a, "A"}, std::pair{&result_->b, "B"}}) {
    if (!ran_simulated(*r)) continue;
    text += QString(" %1 is simulated on %2: its figures and its curves in the charts are on the dry run's virtual "
                    "clock, not measured (its roofline points are that device's, drawn against this machine's roofs); "
                    "its attention panels stay empty (a dry run runs no attention).")
                .arg(name, QString::fromStdString(r->simulated_on));
  }
  if (chat_busy_polls_ > 0) text += " Chat replies streamed during the run and shared the CPU.";
  show_status(text);
  refresh_controls();
}

void CompareView::display_result() {
  refresh_attribution();
  if (!result_ || running()) {
    headline_->setText(running() ? "<span style='color:#6b7280;'>Running: the result appears when both sides have "
                                   "run.</span>"
                                 : "<span style='color:#6b7280;'>No comparison yet.</span>");
    fill_delta_table(*deltas_, {});
    outputs_->setHtml(QString("<p style='color:#6b7280;'>Both outputs of every request appear here, the first token "
                              "where they part marked. %1</p>")
                          .arg(kDivergenceNote));
    dashboard_->clear();
    dashboard_->set_overlay(nullptr, {}, {});
    return;
  }
  const QString attribution = result_attribution();
  // A local side by its configuration, a server side by its source, a simulated side flagged as such
  // with its configuration and a virtual duration.
  const auto side = [](const WorkloadResult& r) {
    const QString duration = QString("%1 s").arg(r.duration_s, 0, 'f', 2);
    if (ran_simulated(r)) {
      return QString("<span style='background:#fef3c7; color:#92400e; font-weight:bold;'>&nbsp;%1&nbsp;</span> %2 "
                     "&nbsp;·&nbsp; %3 virtual")
          .arg(QString::fromStdString(side_source(r)).toHtmlEscaped(), QString::fromStdString(config_summary(r.config)).toHtmlEscaped(),
               duration);
    }
    const QString label = ran_on_server(r) ? QString::fromStdString(r.metrics.source) : QString::fromStdString(config_summary(r.config));
    return label.toHtmlEscaped() + " &nbsp;·&nbsp; " + duration;
  };
  const int runs = result_->runs_per_side();
  const QString runs_text = runs > 1 ? QString(", %1 runs per side: medians; charts and outputs of the first").arg(runs)
                                     : QString(", one run per side");
  headline_->setText(QString("<b style='color:%1;'>A</b> %2 &nbsp;&nbsp; vs &nbsp;&nbsp; "
                             "<b style='color:%3;'>B</b> %4<br>workload <b>%5</b> (%6 requests, "
                             "greedy, seed %7%8) &nbsp;·&nbsp; <b>%9</b>%10")
                         .arg(kColourA, side(result_->a), kColourB, side(result_->b))
                         .arg(QString::fromStdString(result_->workload).toHtmlEscaped())
                         .arg(result_->outputs.size())
                         .arg(result_->sampling.seed)
                         .arg(runs_text)
                         .arg(verdict_html(*result_))
                         .arg(attribution.isEmpty() ? QString() : "<br>" + attribution));
  fill_delta_table(*deltas_, comparison_deltas(*result_));
  // The table takes the height of its rows; the outputs below get the rest.
  deltas_->setMaximumHeight(deltas_->horizontalHeader()->height() + deltas_->rowCount() * deltas_->rowHeight(0) +
                            2 * deltas_->frameWidth() + 2);
  outputs_->setHtml(outputs_html(result_->outputs));
  dashboard_->update_from(result_->a.metrics);
  const auto run_label = [](const WorkloadResult& r, const QString& name) {
    return ran_simulated(r) ? name + " (dry run)" : name;
  };
  // A dry run's virtual clock against a measured one: B gets a time axis of its own.
  dashboard_->set_overlay(&result_->b.metrics, run_label(result_->a, "A"), run_label(result_->b, "B"),
                          ran_simulated(result_->a) != ran_simulated(result_->b));
}

void CompareView::show_status(const QString& text, bool error) {
  status_->setStyleSheet(error ? "color:#b91c1c;" : "color:#374151;");
  status_->setText(text);
}

QString CompareView::status_text() const { return status_->text(); }

QString CompareView::outputs_text() const { return outputs_->toPlainText(); }

void CompareView::refresh_controls() {
  const bool busy = running();
  run_->setEnabled(!busy);
  cancel_->setEnabled(busy);
  runs_on_a_->setEnabled(!busy);
  runs_on_b_->setEnabled(!busy);
  export_->setEnabled(!busy && result_ != nullptr);
  workload_->setEnabled(!busy);
  browse_->setEnabled(!busy);
  run_to_length_->setEnabled(!busy && !workload_->currentData().toString().isEmpty());
  if (!busy && !result_) progress_->setValue(0);
}

void CompareView::export_dialog() {
  const QString path = QFileDialog::getSaveFileName(this, "Export the comparison", "comparison.json", "JSON (*.json)");
  if (path.isEmpty()) return;
  QString error;
  if (export_to(path, &error)) {
    show_status("Exported " + path + " and its .png");
  } else {
    show_status(error, true);
  }
}

bool CompareView::export_to(const QString& json_path, QString* error) const {
  if (!result_) {
    *error = "no comparison to export yet";
    return false;
  }
  const std::string json = comparison_json(*result_).dump(2);
  if (!save_atomically(json_path, QByteArray::fromStdString(json), error)) return false;
  QByteArray png;
  QBuffer buffer(&png);
  buffer.open(QIODevice::WriteOnly);
  results_->grab().save(&buffer, "PNG");
  const QFileInfo info(json_path);
  return save_atomically(info.path() + "/" + info.completeBaseName() + ".png", png, error);
}

}  // namespace inferscope::gui
