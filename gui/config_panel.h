// The engine's toggles: KV manager, block size, budget, context, prefix caching, attention, KV
// dtype, quantization, scheduler, limits, threads and device. Each has one line under it saying
// what it changes. A change applies at once (spin boxes when editing ends) through the bridge;
// the engine's answer (what changed, what it did to running requests) shows at the bottom.
#pragma once
#include <QWidget>

#include "core/engine/engine_config.h"

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QSpinBox;
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
  void show_result(bool applied, const QString& message);
  QString result_text() const;

 signals:
  void apply_requested(const inferscope::EngineConfig& config);

 private:
  void add_row(QVBoxLayout* section, const QString& label, QWidget* field, const QString& explanation);
  void refresh_enabled();
  void changed();

  EngineConfig base_;
  bool updating_ = false;
  QComboBox *kv_kind_, *block_size_, *attention_, *kv_dtype_, *quant_, *scheduler_, *device_;
  QSpinBox *budget_mib_, *context_, *max_running_, *max_batch_tokens_, *threads_;
  QCheckBox* prefix_cache_;
  QLabel* result_;
};

}  // namespace inferscope::gui
