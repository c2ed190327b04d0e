// The workbench window (docs/ARCHITECTURE.md §9): the model bar on top; tabs Chat | Compare A/B | Learn | Model;
// the Chat tab holds the sessions and conversation beside the engine toggles, and the live
// dashboard beside the block-table view below; the status bar reads
// "running N · waiting M · KV x% · engine: y tok/s decode (all requests) · weights q8 (35.2 MiB)",
// each figure with its help as tooltip (status_fields.h). Models open from the file dialog, the recent list,
// the command line or by dropping a .gguf file on the window.
#pragma once
#include <QMainWindow>
#include <QString>

#include "core/engine/engine_config.h"
#include "core/engine/engine_metrics.h"
#include "core/kv/kv_cache.h"

class BlockTableView;
class MetricsDashboard;
class QLabel;
class QMenu;
class QProgressBar;
class QScrollArea;
class QTabWidget;

namespace inferscope::gui {

class ChatPanel;
class CompareView;
class ConfigPanel;
class EngineBridge;
class LearnView;
class StatusFields;
class ModelInfoPanel;

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
  QString status_text() const;
  StatusFields* status_fields() const { return status_; }
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

 private:
  QWidget* build_chat_tab();
  void build_menus();
  void remember_model(const QString& path);
  void refresh_recent_menu();
  void on_model_loaded(const QString& path);
  void on_model_failed(const QString& path, const QString& message);
  void on_config_result(bool applied, const QString& message);
  // A window-modal dialog that does not block (error_shown follows).
  void show_error(const QString& title, const QString& text);
  void on_kv(const inferscope::KvSnapshot& snapshot);
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
  QLabel *model_label_, *device_label_;
  StatusFields* status_;
  QString model_text_;  // the top bar's model summary, before the weights in use
  QProgressBar* progress_;
  QMenu* recent_menu_;
};

}  // namespace inferscope::gui
