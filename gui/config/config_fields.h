// The engine toggles as editable widgets, shared by the config panel (the live engine) and the
// comparison view's two compact editors (configurations A and B): one place that knows each
// toggle's choices, how to show a config and how to read one back.
#pragma once
#include <QString>
#include <QWidget>
#include <functional>
#include <vector>

#include "core/engine/engine_config.h"
#include "gui/config/field_widgets.h"
#include "gui/config/spec_fields.h"

class QCheckBox;
class QComboBox;
class QSpinBox;

namespace inferscope::gui {

// The widgets are made parentless; whoever lays them out owns them (a layout reparents them).
struct ConfigFields {
  ConfigFields();

  QComboBox *kv_kind, *block_size, *attention, *kv_dtype, *quant, *scheduler;
  QSpinBox *budget_mib, *context, *max_running, *max_batch_tokens;
  QCheckBox *prefix_cache, *fuse;
  SpecFields spec;

  using Row = ToggleRow;
  // Every toggle with its label and explanation, in display order (KV cache, compute, scheduler,
  // speculative decoding).
  std::vector<Row> rows() const;

  // Shows `config` (the widgets' signals fire; callers guard against re-entry).
  void show(const EngineConfig& config);
  // `base` with the shown values.
  EngineConfig read(EngineConfig base) const;
  // Block size and prefix cache only mean something for a paged cache; the speculation fields follow its mode.
  void refresh_enabled();
  // Calls `changed` when a choice changes (combos, the check box) or a spin box's edit ends with a
  // new value.
  void on_change(QObject* context, const std::function<void()>& changed);
  // The spin boxes' current values become the "applied" ones (no change until edited again).
  void mark_applied();
  // Sets each widget's objectName to `prefix` + its key ("kv_kind", "block_size", "kv_budget_mib", ...,
  // "spec_mode", "spec_draft_model", ...).
  void name_widgets(const QString& prefix);
};

}  // namespace inferscope::gui
