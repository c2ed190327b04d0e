// The engine's toggles: KV manager, block size, budget, context, prefix caching, attention, KV
// dtype, quantization, scheduler, limits, threads, device and speculative decoding. Each has one
// line under it saying what it changes. A change applies at once (spin boxes when editing ends)
// through the bridge; the engine's answer (what changed, what it did to running requests) shows at
// the bottom, and a background weight conversion shows its progress under the quantization toggle.
#pragma once
#include <QWidget>

#include "core/engine/engine_config.h"
#include "core/engine/engine_metrics.h"
#include "gui/config/config_fields.h"

class QComboBox;
class QLabel;
class QTimer;
class QProgressBar;
class QScrollArea;
class QVBoxLayout;

namespace inferscope::gui {

class ConfigPanel : public QWidget {
  Q_OBJECT
 public:
  explicit ConfigPanel(QWidget* parent = nullptr);
  // Shows `config` without emitting apply_requested.
  void set_config(const EngineConfig& config);
  // The shown values over the last config set.
  EngineConfig config() const;
  // The outcome of applying the toggles: shown for kResultSeconds, then gone (a later one replaces it).
  void show_result(bool applied, const QString& message);
  // A hint that is neither applied nor refused (what a choice still needs), for as long.
  void show_note(const QString& message);
  void clear_result();
  QString result_text() const;
  static constexpr int kResultSeconds = 12;
  // The weights in use and any conversion running (from the engine's metrics).
  void show_weights(const EngineMetricsSnapshot& snapshot);
  QString weights_text() const;
  // Where the engine runs, and why when a device failed (from the engine's metrics).
  void show_device(const EngineMetricsSnapshot& snapshot);
  QString device_text() const;
  bool converting() const;
  // Scrolls the toggle whose objectName is `name` (and its section) into view; false when there is none.
  bool reveal(const QString& name);

 signals:
  void apply_requested(const inferscope::EngineConfig& config);

 private:
  void add_row(QVBoxLayout* section, const ToggleRow& toggle);
  void changed();

  EngineConfig base_;
  bool updating_ = false;
  ConfigFields fields_;
  QComboBox* device_;
  QLabel* device_status_;
  QLabel *weights_, *result_;
  QTimer* result_timer_;
  QProgressBar* conversion_;
  QScrollArea* scroll_;
};

}  // namespace inferscope::gui
