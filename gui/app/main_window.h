// The workbench window (docs/ARCHITECTURE.md §9): the model bar on top; tabs Chat | Compare A/B | Learn | Model;
// the Chat tab holds the sessions and conversation beside the engine toggles, and the live
// dashboard beside the block-table view below; the status bar reads
// "running N · waiting M · KV x% · engine: y tok/s decode (all requests) · weights q8 (35.2 MiB)",
// each figure with its help as tooltip (status_fields.h). Until the first model is loaded, a welcome
// page (welcome_page.h) stands in place of the tabs; the engine is built only once a model loads. Models
// open from the file dialog, the recent list, the welcome page, the command line or by dropping a .gguf
// file on the window. The recent models, the last engine configuration (engine_settings.h) and the
// window layout (window_layout.h) persist in QSettings; the configuration is restored when the first
// model loads. The Server menu's Serve switch (also on the model bar) puts the loaded model behind the
// OpenAI-compatible server beside the chat (EngineBridge::start_serving); the status bar then shows
// its URL and its clients' requests, and the timeline and block view name each client.
#pragma once
#include <QMainWindow>
#include <QString>

#include "core/engine/engine_config.h"
#include "core/engine/engine_metrics.h"
#include "core/kv/kv_cache.h"

class BlockTableView;
class MetricsDashboard;
class QAction;
class QLabel;
class QMenu;
class QProgressBar;
class QScrollArea;
class QStackedWidget;
class QTabWidget;

namespace inferscope::gui {

class ChatPanel;
class CompareView;
class ConfigPanel;
class EngineBridge;
class LearnView;
class StatusFields;
class StatusNote;
class ModelInfoPanel;
class WelcomePage;

struct MainWindowOptions {
  QString sessions_dir;  // where sessions autosave
  QString model_path;    // opened at start when not empty
};

// What the workbench starts with: a paged cache of 128 MiB over a 2048-token context, flash
// attention, continuous batching with chunked prefill (512 tokens a step).
EngineConfig default_engine_config();

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(const MainWindowOptions& options, QWidget* parent = nullptr);
  ~MainWindow() override;

  void open_model(const QString& path);
  EngineBridge& bridge() const { return *bridge_; }
  ChatPanel* chat() const { return chat_; }
  ConfigPanel* config_panel() const { return config_; }
  CompareView* compare() const { return compare_; }
  LearnView* learn() const { return learn_; }
  MetricsDashboard* dashboard() const { return dashboard_; }
  BlockTableView* block_table() const { return blocks_; }
  ModelInfoPanel* model_info() const { return model_info_; }
  QTabWidget* tabs() const { return tabs_; }
  WelcomePage* welcome() const { return welcome_; }
  // True until the first model has loaded (the welcome page is shown instead of the tabs).
  bool showing_welcome() const;
  QString status_text() const;
  StatusFields* status_fields() const { return status_; }
  StatusNote* status_note() const { return note_; }
  // The Serve switch (checked while serving is asked for).
  QAction* serve_action() const { return serve_action_; }
  // Scrolls the Chat tab's dashboard to the plot named `name` (false: there is none).
  bool show_plot(const QString& name);
  QStringList recent_models() const;

 signals:
  // A message the user must see (also shown in a dialog): a model that would not load, a
  // configuration the engine refused.
  void error_shown(const QString& message);

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;
  void closeEvent(QCloseEvent* event) override;

 private:
  QWidget* build_chat_tab();
  void build_menus();
  // File > Open's dialog, also behind the welcome page's "Open a GGUF file…".
  void choose_model_file();
  // File > Connect to server…, also behind the welcome page's button: a remote engine once checked.
  void connect_to_server();
  // The chat and dashboards now run on a server: the top bar, the block view and the panels say so.
  void on_remote_connected(const QString& source);
  // The engine configuration saved by an earlier run, sent to the engine once the first model is loaded.
  void restore_saved_config();
  void remember_model(const QString& path);
  void refresh_recent_menu();
  void on_model_loaded(const QString& path);
  void on_model_failed(const QString& path, const QString& message);
  void on_config_result(bool applied, const QString& message);
  // A window-modal dialog that does not block (error_shown follows).
  void show_error(const QString& title, const QString& text);
  void on_kv(const inferscope::KvSnapshot& snapshot);
  // The Serve switch flipped by the user; Server > Server settings…; the bridge's answer.
  void toggle_serving(bool on);
  void open_serve_settings();
  void on_serving_changed(const QString& url, const QString& error);
  void show_serving();
  void on_metrics(const inferscope::EngineMetricsSnapshot& snapshot);
  void follow_current_session();

  EngineBridge* bridge_;
  ChatPanel* chat_;
  ConfigPanel* config_;
  CompareView* compare_;
  LearnView* learn_;
  MetricsDashboard* dashboard_;
  QScrollArea* dashboard_scroll_;
  BlockTableView* blocks_;
  ModelInfoPanel* model_info_;
  QTabWidget* tabs_;
  WelcomePage* welcome_;
  QStackedWidget* pages_;  // the welcome page, then the tabs
  bool restoring_config_ = false;  // the engine's next config answer is about the saved configuration
  QString restore_notes_;          // the saved values that were skipped, for that answer's message
  QLabel *model_label_, *device_label_;
  StatusFields* status_;
  StatusNote* note_;
  QString model_text_;  // the top bar's model summary, before the weights in use
  QProgressBar* progress_;
  QMenu* recent_menu_;
  QAction* serve_action_ = nullptr;
  QTimer* serve_status_timer_;  // refreshes the status bar's server figures while serving
};

}  // namespace inferscope::gui
