#include "gui/app/main_window.h"

#include <QApplication>
#include <QCloseEvent>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QTimer>
#include <QToolBar>
#include <qcustomplot.h>
#include <algorithm>
#include <optional>
#include <thread>
#include <utility>

#include "core/engine/setting_table.h"
#include "core/model/load_error.h"
#include "gui/app/engine_settings.h"
#include "gui/app/model_fetch.h"
#include "gui/app/status_fields.h"
#include "gui/app/status_note.h"
#include "gui/app/welcome_page.h"
#include "gui/remote/connect_dialog.h"
#include "gui/serve/serve_dialog.h"
#include "gui/app/window_layout.h"
#include "gui/blocks/block_table_view.h"
#include "gui/bridge/engine_bridge.h"
#include "gui/chat/chat_panel.h"
#include "gui/compare/compare_view.h"
#include "gui/bridge/resource_path.h"
#include "gui/learn/learn_view.h"
#include "gui/config/config_panel.h"
#include "gui/dashboard/metrics_dashboard.h"
#include "gui/model/model_info_panel.h"
#include "gui/plot/vertical_scroll.h"

namespace inferscope::gui {
namespace {

constexpr int kMaxRecent = 8;
const char* kRecentKey = "recent_models";
constexpr qsizetype kMarkLabelChars = 28;  // a configuration mark's label on the charts

// A few words for a chart mark from the engine's note: its first clause ("KV contiguous, block size
// 16: new KV cache; ..." -> "KV contiguous, block size 16"), shortened.
QString mark_label(const QString& message) {
  QString label = message.section(QRegularExpression("[:;]"), 0, 0).trimmed();
  if (label.size() > kMarkLabelChars) label = label.left(kMarkLabelChars - 1) + QStringLiteral("…");
  return label;
}

// The local engine's device ("cpu", "cuda:0", or the CPU after a device failed and why), and the CPU's threads.
QString local_device_text(const std::string& device = "cpu") {
  return QString("device: %1 · %2 threads  ").arg(QString::fromStdString(device)).arg(std::thread::hardware_concurrency());
}

// The first local .gguf file among dropped URLs ("" when none).
QString dropped_model(const QMimeData* mime) {
  for (const QUrl& url : mime->urls()) {
    if (url.isLocalFile() && url.toLocalFile().endsWith(".gguf", Qt::CaseInsensitive)) return url.toLocalFile();
  }
  return {};
}

}  // namespace

EngineConfig default_engine_config() {
  EngineConfig c;
  c.kv.budget_bytes = size_t{128} << 20;
  c.context_length = 2048;
  c.scheduler.max_batch_tokens = 512;
  return c;
}

MainWindow::MainWindow(const MainWindowOptions& options, QWidget* parent)
    : QMainWindow(parent),
      bridge_(new EngineBridge(default_engine_config())),
      chat_(new ChatPanel(*bridge_, SessionStore(options.sessions_dir))),
      config_(new ConfigPanel),
      compare_(new CompareView(*bridge_, *chat_)),
      learn_(new LearnView(*bridge_)),
      dashboard_(new MetricsDashboard),
      dashboard_scroll_(vertical_scroll(dashboard_)),
      blocks_(new BlockTableView),
      model_info_(new ModelInfoPanel),
      tabs_(new QTabWidget),
      welcome_(new WelcomePage(fetched_demo_model_path())),
      pages_(new QStackedWidget),
      model_label_(new QLabel),
      device_label_(new QLabel),
      status_(new StatusFields),
      note_(new StatusNote),
      progress_(new QProgressBar),
      recent_menu_(nullptr),
      serve_status_timer_(new QTimer(this)) {
  setWindowTitle("Inferscope");
  setAcceptDrops(true);
  resize(1600, 1000);
  build_menus();

  tabs_->addTab(build_chat_tab(), "Chat");
  tabs_->addTab(compare_, "Compare A/B");
  tabs_->addTab(learn_, "Learn");
  learn_->load_experiments(resolve_resource_path("resources/experiments"));
  tabs_->addTab(model_info_, "Model");
  pages_->addWidget(welcome_);
  pages_->addWidget(tabs_);
  setCentralWidget(pages_);
  connect(welcome_, &WelcomePage::open_file_requested, this, &MainWindow::choose_model_file);
  connect(welcome_, &WelcomePage::connect_requested, this, &MainWindow::connect_to_server);
  connect(welcome_, &WelcomePage::model_chosen, this, &MainWindow::open_model);
  refresh_recent_menu();

  progress_->setRange(0, 0);  // busy indicator: loading reports no fraction
  progress_->setTextVisible(false);
  progress_->setMaximumWidth(160);
  progress_->setVisible(false);
  statusBar()->addWidget(note_, 1);
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(status_);

  config_->set_config(bridge_->config());
  blocks_->set_token_decoder([this](std::span<const int32_t> ids) {
    const LlamaModel* model = bridge_->model();
    if (!model) return QString();
    return QString::fromStdString(model->tokenizer().decode(std::vector<TokenId>(ids.begin(), ids.end()), true));
  });

  connect(bridge_, &EngineBridge::model_loading, this, [this](const QString& path) {
    progress_->setVisible(true);
    note_->show_message("Loading " + QFileInfo(path).fileName() + "…");
  });
  connect(bridge_, &EngineBridge::model_loaded, this, &MainWindow::on_model_loaded);
  connect(bridge_, &EngineBridge::model_failed, this, &MainWindow::on_model_failed);
  connect(bridge_, &EngineBridge::remote_connected, this, &MainWindow::on_remote_connected);
  connect(bridge_, &EngineBridge::engine_replaced, dashboard_, &MetricsDashboard::clear);
  connect(bridge_, &EngineBridge::metrics_updated, this, &MainWindow::on_metrics);
  connect(bridge_, &EngineBridge::kv_updated, this, &MainWindow::on_kv);
  connect(bridge_, &EngineBridge::config_result, this, &MainWindow::on_config_result);
  connect(bridge_, &EngineBridge::serving_changed, this, &MainWindow::on_serving_changed);
  serve_status_timer_->setInterval(500);
  connect(serve_status_timer_, &QTimer::timeout, this, &MainWindow::show_serving);
  connect(bridge_, &EngineBridge::config_applied, this, [this](double time_s, const QString& message) {
    dashboard_->mark_config_change(time_s, mark_label(message));
  });
  connect(bridge_, &EngineBridge::machine_measured, this, [this](double peak, double bandwidth) {
    for (MetricsDashboard* d : {dashboard_, compare_->dashboard()}) d->set_roofs({peak, bandwidth});
  });
  connect(config_, &ConfigPanel::apply_requested, bridge_, &EngineBridge::set_config);
  connect(chat_, &ChatPanel::current_session_changed, this, &MainWindow::follow_current_session);
  connect(blocks_, &BlockTableView::sequence_selected, this, [this](int32_t seq) {
    const int index = chat_->session_of_request(bridge_->request_of_sequence(seq));
    if (index >= 0 && index != chat_->current_index()) chat_->select_session(index);
  });

  restore_window_layout(QSettings(), *this);
  if (!options.model_path.isEmpty()) open_model(options.model_path);
}

MainWindow::~MainWindow() {
  // The engine goes first (joined on its worker), while every widget it reports to still exists.
  delete bridge_;
}

QWidget* MainWindow::build_chat_tab() {
  // Named splitters keep their sizes between runs (window_layout.h).
  auto* top = new QSplitter(Qt::Horizontal);
  top->setObjectName("chat_top_splitter");
  top->addWidget(chat_);
  top->addWidget(config_);
  top->setStretchFactor(0, 3);
  top->setStretchFactor(1, 1);
  top->setSizes({1150, 420});
  // The plots keep a readable minimum size: below it the dashboard scrolls instead of squeezing the chat.
  auto* bottom = new QSplitter(Qt::Horizontal);
  bottom->setObjectName("chat_bottom_splitter");
  bottom->addWidget(dashboard_scroll_);
  bottom->addWidget(blocks_);
  bottom->setStretchFactor(0, 2);
  bottom->setStretchFactor(1, 1);
  bottom->setSizes({1100, 570});
  auto* tab = new QSplitter(Qt::Vertical);
  tab->setObjectName("chat_splitter");
  tab->addWidget(top);
  tab->addWidget(bottom);
  tab->setStretchFactor(0, 1);
  tab->setStretchFactor(1, 1);
  tab->setSizes({540, 460});
  return tab;
}

void MainWindow::build_menus() {
  QMenu* file = menuBar()->addMenu("&File");
  QAction* open = file->addAction(style()->standardIcon(QStyle::SP_DialogOpenButton), "&Open model…", this,
                                  &MainWindow::choose_model_file);
  open->setShortcut(QKeySequence::Open);
  recent_menu_ = file->addMenu("Open &recent");
  file->addAction(style()->standardIcon(QStyle::SP_DriveNetIcon), "&Connect to server…", this, &MainWindow::connect_to_server);
  file->addAction("&Import chat session…", this, [this] { chat_->import_dialog(); });
  file->addSeparator();
  file->addAction("&Quit", QKeySequence::Quit, this, &QWidget::close);

  QMenu* server = menuBar()->addMenu("&Server");
  serve_action_ = server->addAction("&Serve the model over HTTP");
  serve_action_->setCheckable(true);
  serve_action_->setEnabled(false);  // until a local model is loaded
  serve_action_->setIconText("Serve");
  serve_action_->setToolTip("Serve the loaded model over the OpenAI API (Server > Server settings… sets the address); "
                            "clients' requests run beside the chat's and show in the dashboards");
  connect(serve_action_, &QAction::triggered, this, &MainWindow::toggle_serving);
  server->addAction("Server &settings…", this, &MainWindow::open_serve_settings);

  QToolBar* bar = addToolBar("Model");
  bar->setObjectName("model_toolbar");  // saveState() names toolbars by objectName
  bar->setMovable(false);
  bar->addAction(open);
  model_label_->setStyleSheet("font-weight:bold; padding-left:6px;");
  model_label_->setText("no model — open a GGUF file or drop one here");
  bar->addWidget(model_label_);
  auto* spacer = new QWidget;
  spacer->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
  bar->addWidget(spacer);
  device_label_->setText(local_device_text());
  device_label_->setToolTip("Where the engine runs; the Config panel's device toggle lists the CUDA devices");
  bar->addWidget(device_label_);
  bar->addAction(serve_action_);
}

void MainWindow::toggle_serving(bool on) {
  if (!on) return bridge_->stop_serving();
  const ServeOptions options = serve_settings();
  if (const QString problem = serve_settings_problem(options); !problem.isEmpty()) {
    serve_action_->setChecked(false);
    show_error("Not serving", problem + " (Server > Server settings…)");
    return;
  }
  bridge_->start_serving(options);
  show_serving();
}

void MainWindow::open_serve_settings() {
  ServeDialog dialog(serve_settings(), this);
  if (dialog.exec() != QDialog::Accepted) return;
  save_serve_settings(dialog.options());
  if (bridge_->serving()) bridge_->start_serving(serve_settings());  // again, on the new address
}

void MainWindow::on_serving_changed(const QString& url, const QString& error) {
  serve_action_->setChecked(bridge_->serving());
  if (bridge_->serving()) {
    serve_status_timer_->start();
  } else {
    serve_status_timer_->stop();
  }
  show_serving();
  if (!url.isEmpty()) note_->show_message("Serving " + QFileInfo(bridge_->model_path()).fileName() + " at " + url + "/v1", 8000);
  if (!error.isEmpty()) show_error("Not serving", error);
}

void MainWindow::show_serving() {
  const GuestCounts counts = bridge_->served_counts();
  status_->show_serving(bridge_->serving_url(), bridge_->serving(), counts.in_flight, counts.submitted);
}

void MainWindow::choose_model_file() {
  const QString start = bridge_->model_path().isEmpty() ? QString() : QFileInfo(bridge_->model_path()).path();
  const QString path = QFileDialog::getOpenFileName(this, "Open a GGUF model", start, "GGUF models (*.gguf);;All files (*)");
  if (!path.isEmpty()) open_model(path);
}

void MainWindow::open_model(const QString& path) { bridge_->load_model(path); }

void MainWindow::connect_to_server() {
  ConnectDialog dialog(this);
  if (dialog.exec() == QDialog::Accepted) bridge_->connect_remote(dialog.endpoint(), dialog.server_info());
}

void MainWindow::on_remote_connected(const QString& source) {
  model_text_ = "server: " + source + (bridge_->remote_model().isEmpty() ? QString() : " · " + bridge_->remote_model());
  model_label_->setText(model_text_);
  setWindowTitle("Inferscope — " + source);
  device_label_->setText("device: the server's  ");
  model_info_->clear();
  blocks_->show_remote(source, std::nullopt, std::nullopt, std::nullopt);
  // The toggles configure the local engine; the server keeps its own configuration.
  config_->setEnabled(false);
  serve_action_->setEnabled(false);
  config_->setToolTip("Connected to " + source + ": the server runs its own configuration. Open a model to use the toggles.");
  note_->show_message("Connected to " + source + (serve_action_->isChecked() ? " (serving stopped: it serves a local model)" : ""), 8000);
  pages_->setCurrentWidget(tabs_);
}

bool MainWindow::showing_welcome() const { return pages_->currentWidget() == welcome_; }

QStringList MainWindow::recent_models() const { return QSettings().value(kRecentKey).toStringList(); }

void MainWindow::remember_model(const QString& path) {
  QStringList recent = recent_models();
  recent.removeAll(path);
  recent.prepend(path);
  while (recent.size() > kMaxRecent) recent.removeLast();
  QSettings().setValue(kRecentKey, recent);
  refresh_recent_menu();
}

void MainWindow::refresh_recent_menu() {
  recent_menu_->clear();
  const QStringList recent = recent_models();
  for (const QString& path : recent) {
    recent_menu_->addAction(QFileInfo(path).fileName(), this, [this, path] { open_model(path); })->setToolTip(path);
  }
  recent_menu_->setEnabled(!recent.isEmpty());
  welcome_->set_recent(recent);
}

void MainWindow::on_model_loaded(const QString& path) {
  progress_->setVisible(false);
  config_->setEnabled(true);
  serve_action_->setEnabled(true);
  config_->setToolTip({});
  device_label_->setText(local_device_text());
  const LlamaModel& model = *bridge_->model();
  const EngineConfig config = bridge_->config();
  model_text_ = model_summary(model, config.kv_dtype);
  model_label_->setText(model_text_);
  setWindowTitle("Inferscope — " + QString::fromStdString(model.config().name));
  model_info_->show_model(model, config.kv_dtype);
  model_info_->show_level(model, config.quant);
  const LlamaConfig& c = model.config();
  blocks_->set_sliding_window({c.windowed_layers() > 0 ? c.sliding_window : 0, c.windowed_layers(), c.n_layers});
  config_->set_config(config);
  config_->clear_result();  // what the last model's toggles did says nothing of this one
  compare_->reset_configs(config);
  remember_model(path);
  if (!showing_welcome()) {
    // A switch keeps the engine's settings, the weight level too: say which, since the new model runs them.
    note_->show_message(QString("Opened %1 keeping the engine settings in use: %2%3 (the config panel changes them)")
                                 .arg(QFileInfo(path).fileName(), QString::fromStdString(config_summary(config)),
                                      config.quant == WeightQuant::Native ? QString(" · native weights") : QString()),
                             20000);
    return;
  }
  note_->show_message("Loaded " + path, 5000);
  pages_->setCurrentWidget(tabs_);
  restore_saved_config();
}

void MainWindow::restore_saved_config() {
  const StoredEngineConfig stored = load_engine_config(QSettings(), bridge_->config());
  if (!stored.found) return;
  // Skipped values are told with the engine's answer, which would otherwise cover them in the status bar.
  restore_notes_ = stored.problems.isEmpty() ? QString() : " (skipped: " + stored.problems.join("; ") + ")";
  restoring_config_ = true;
  bridge_->set_config(stored.config);
}

void MainWindow::on_model_failed(const QString& path, const QString& message) {
  progress_->setVisible(false);
  note_->show_message("Could not open " + path, 8000);
  // What it means first, the loader's exact words (file, field, value) after.
  show_error("Model not loaded", "Could not open " + QFileInfo(path).fileName() + ". " +
                                     QString::fromStdString(load_error_summary(message.toStdString())) +
                                     "\n\nDetails: " + message);
}

void MainWindow::on_config_result(bool applied, const QString& message) {
  config_->show_result(applied, message);  // the panel's note says it; the status bar stays for the rest
  const bool restoring = std::exchange(restoring_config_, false);
  if (applied) {
    const EngineConfig config = bridge_->config();
    // The engine moved on its own (a failed device sent it to the CPU): the toggle follows.
    if (config.device != config_->config().device) config_->set_config(config);
    if (restoring) {
      // The panels show what the saved configuration set.
      config_->set_config(config);
      compare_->reset_configs(config);
      note_->show_message("Restored the saved engine configuration: " + message + restore_notes_, 15000);
    }
    QSettings settings;
    save_engine_config(settings, config);
    return;
  }
  if (restoring) {
    // A saved configuration this model cannot run never stands in the way: the model runs the defaults.
    config_->set_config(bridge_->config());
    note_->show_message("The saved engine configuration was not applied (" + message + "); the engine runs the defaults" +
                             restore_notes_ + ".", 15000);
    return;
  }
  // The engine changed nothing: the panel shows again what it runs, and the user is told why.
  config_->set_config(bridge_->config());
  show_error("Configuration not applied", message + "\n\nThe engine goes on with its previous configuration.");
}

void MainWindow::show_error(const QString& title, const QString& text) {
  // Window-modal and non-blocking: the engine and the chat carry on behind it.
  auto* box = new QMessageBox(QMessageBox::Critical, title, text, QMessageBox::Ok, this);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
  emit error_shown(text);
}

void MainWindow::on_metrics(const EngineMetricsSnapshot& m) {
  dashboard_->update_from(m);
  // A server whose block table is its own: the view shows what it states of it.
  if (!bridge_->engine_internals()) {
    const std::optional<ServerKvPool> pool = bridge_->remote_kv_pool();
    blocks_->show_remote(QString::fromStdString(m.source), reported_kv_usage(m),
                         pool ? std::optional<int>(static_cast<int>(pool->blocks)) : std::nullopt,
                         pool ? std::optional<int>(static_cast<int>(pool->block_size)) : std::nullopt);
    blocks_->set_remote_detail(QString::fromStdString(slots_summary(bridge_->remote_slots())));
  }
  config_->show_weights(m);
  config_->show_device(m);
  if (m.source.empty()) device_label_->setText(local_device_text(device_line(m)));
  status_->show_metrics(m);
  if (!model_text_.isEmpty() && m.source.empty()) model_label_->setText(model_text_ + " · " + StatusFields::weights_text(m));
  const std::optional<WeightQuant> level = weight_quant_from_name(m.weights_quant);
  if (bridge_->model() != nullptr && level) model_info_->show_level(*bridge_->model(), *level);
}

void MainWindow::on_kv(const KvSnapshot& snapshot) {
  std::map<int32_t, SequenceOwner> owners;
  for (const KvSnapshot::Sequence& seq : snapshot.sequences) {
    const int index = chat_->session_of_request(bridge_->request_of_sequence(seq.id));
    if (index < 0) continue;
    const ChatSession& session = chat_->session(index);
    owners[seq.id] = {QString::fromStdString(session.id), QString::fromStdString(session.name)};
  }
  blocks_->set_sequence_owners(owners);
  blocks_->update_from(snapshot);
  follow_current_session();
}

void MainWindow::follow_current_session() {
  const int32_t seq = bridge_->sequence_of_request(chat_->current_request());
  if (seq >= 0 && seq != blocks_->selected_sequence()) blocks_->select_sequence(seq);
}

QString MainWindow::status_text() const { return status_->text(); }

bool MainWindow::show_plot(const QString& name) {
  QWidget* plot = dashboard_->plot(name);
  if (!plot) return false;
  dashboard_scroll_->ensureWidgetVisible(plot, 0, 0);
  return true;
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (!dropped_model(event->mimeData()).isEmpty()) event->acceptProposedAction();
}

void MainWindow::closeEvent(QCloseEvent* event) {
  QSettings settings;
  save_window_layout(settings, *this);
  QMainWindow::closeEvent(event);
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QString path = dropped_model(event->mimeData());
  if (path.isEmpty()) return;
  event->acceptProposedAction();
  open_model(path);
}

}  // namespace inferscope::gui
