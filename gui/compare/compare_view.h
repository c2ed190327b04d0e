// The Compare A/B tab: two sides (A and B), each a compact config editor for the local engine, a
// server (URL, API key, model, checked before a run), or a simulated device (the same config editor
// and a device model: a dry run priced on the device, labelled simulated everywhere), a workload (the
// current chat, a shipped workload or a JSON file, described before it runs: its requests, and which
// prompts are synthetic), and runs of A then B, as many times per side as asked, with the same greedy
// sampling (CompareRunner, off the GUI thread, with progress and cancel). A run clears the shown
// result; a cancelled or failed one shows the previous result again. Under the editors, a warning
// when A and B differ in several settings (no difference can then be pinned on one), a note when
// they are identical; the results' headline and export repeat it. The results: the delta
// table (B against A), both outputs per request with the first divergent token marked, and the
// dashboard's charts with B overlaid on A. Export writes the comparison as JSON and the results as
// PNG, both atomically.
//
// The chat engine keeps serving while a comparison runs: both compete for the CPU cores, so the
// view says so when chat replies stream during a run (their timings are then not a clean A/B).
#pragma once
#include <QString>
#include <QTimer>
#include <QWidget>
#include <memory>

#include "core/engine/engine_config.h"
#include "gui/compare/compare_runner.h"
#include "gui/compare/comparison.h"
#include "gui/config/config_fields.h"

class MetricsDashboard;
class QCheckBox;
class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QStackedWidget;
class QTableWidget;
class QTextBrowser;

namespace inferscope::gui {

class ChatPanel;
class DevicePicker;
class EngineBridge;
class ServerSideEditor;

class CompareView : public QWidget {
  Q_OBJECT
 public:
  CompareView(EngineBridge& bridge, ChatPanel& chat, QWidget* parent = nullptr);
  ~CompareView() override;

  // Shows `config` in both editors (B switched to a contiguous cache, so the first run shows a difference).
  void reset_configs(const EngineConfig& config);
  void set_configs(const EngineConfig& a, const EngineConfig& b);
  EngineConfig config_a() const;
  EngineConfig config_b() const;
  // The workload: the current chat session, or a JSON file (added to the list when new).
  void use_chat_workload();
  void use_workload_file(const QString& path);
  void set_run_to_output_tokens(bool on);
  // Runs of each side (1-10): the delta table colours a change only beyond the spread of its runs.
  void set_runs_per_side(int runs);
  // What the chosen workload is (its description and describe_workload), or why it cannot be read.
  QString workload_description() const;
  // Side 0 (A) or 1 (B) on a server (its editor: server_editor) or on the local engine.
  void set_on_server(int side, bool on);
  bool on_server(int side) const;
  ServerSideEditor* server_editor(int side) const { return side == 0 ? server_a_ : server_b_; }
  // Side 0 (A) or 1 (B) simulated on the device read from `device_file` ("h200.json" of
  // resources/devices), its config editor's configuration run as a dry run; false when no readable
  // device has that file name.
  bool set_simulated(int side, const QString& device_file);
  bool simulated(int side) const;
  DevicePicker* device_picker(int side) const { return side == 0 ? device_a_ : device_b_; }

  // Starts A then B; false (with the reason shown) when a local or simulated side has no model loaded, a server
  // side has not been checked successfully, a run is going on, or the workload cannot be built.
  bool start();
  void cancel();
  bool running() const;
  // The last finished comparison (null before the first).
  const Comparison* result() const { return result_.get(); }
  QString status_text() const;
  QTableWidget* delta_table() const { return deltas_; }
  QString outputs_text() const;
  MetricsDashboard* dashboard() const { return dashboard_; }
  // Writes the comparison as JSON at `json_path` and the results' picture next to it (same name,
  // .png); false with `error` set when there is no result or a file cannot be written.
  bool export_to(const QString& json_path, QString* error) const;

 signals:
  // A run ended: finished, cancelled or failed.
  void run_ended();

 private:
  QWidget* build_setup();
  // Side `side`'s group: the runs-on choice over its config editor (under the device picker while
  // simulated) and its server editor.
  QWidget* build_side(int side);
  // The side to run, or false with `error` set (a server side not checked, no readable device).
  bool side_of(int side, CompareSide& out, QString* error) const;
  // What runs side `side`: "the local engine (model)", the server or the simulated device.
  QString side_label(int side) const;
  QWidget* build_results();
  void show_result(std::shared_ptr<const Comparison> comparison);
  // Draws result_ in the headline, table, outputs and charts; their empty states while it is null
  // or a run is going on.
  void display_result();
  void refresh_workload_description();
  void show_status(const QString& text, bool error = false);
  void refresh_controls();
  // Shows what the editors' A and B allow a comparison to say (attribution_html); hidden when one setting differs,
  // and while the shown result's headline says the same.
  void refresh_attribution();
  // What the shown result's A and B allow it to say (empty for a server side).
  QString result_attribution() const;
  void poll_progress();
  void export_dialog();

  EngineBridge& bridge_;
  ChatPanel& chat_;
  CompareRunner* runner_;
  ConfigFields a_, b_;
  QComboBox *runs_on_a_, *runs_on_b_;
  QStackedWidget *stack_a_, *stack_b_;
  ServerSideEditor *server_a_, *server_b_;
  DevicePicker *device_a_, *device_b_;
  std::shared_ptr<const Comparison> result_;
  QComboBox* workload_;
  QCheckBox* run_to_length_;
  QSpinBox* runs_;
  QLabel* workload_about_;
  QPushButton *run_, *cancel_, *browse_, *export_;
  QProgressBar* progress_;
  QLabel *status_, *headline_, *attribution_;
  QTableWidget* deltas_;
  QTextBrowser* outputs_;
  MetricsDashboard* dashboard_;
  QWidget* results_;
  QTimer poll_;
  int chat_busy_polls_ = 0;  // progress polls that saw chat replies streaming during this run
};

}  // namespace inferscope::gui
