// The engine settings as editable widgets, shared by the config panel (the live engine) and the
// comparison view's two compact editors (configurations A and B). Each field is made from its row in
// the setting table; this struct only lays them out, and knows which ones the speculation mode shows.
#pragma once
#include <QString>
#include <QWidget>
#include <functional>
#include <string_view>
#include <vector>

#include "core/engine/setting_table.h"
#include "gui/config/field_widgets.h"

class QStackedWidget;

namespace inferscope::gui {

// The setting's row as an editor lays it out: its section, label, explanation and tooltip.
ToggleRow setting_row(const EngineSetting& setting, QWidget* field);

// The widgets are made parentless; whoever lays them out owns them (a layout reparents them).
struct ConfigFields {
  // A field for every setting but the device (the config panel offers the devices it finds).
  ConfigFields();

  struct Field {
    const EngineSetting* setting;
    QWidget* widget;
  };
  std::vector<Field> fields;  // in the table's order
  // What drafts under the shown speculation mode: one page per mode, in kSpecModes order, with the
  // fields of the settings that apply under that mode alone (the n-gram sizes, the draft model, its
  // level, the early-exit layers).
  QStackedWidget* drafter;

  // The field of the setting `key`; nullptr when there is none.
  QWidget* field(std::string_view key) const;

  using Row = ToggleRow;
  // Every field with its label and explanation, in display order (KV cache, compute, scheduler,
  // speculative decoding); the drafter's fields as one row.
  std::vector<Row> rows() const;

  // Shows `config` (the widgets' signals fire; callers guard against re-entry).
  void show(const EngineConfig& config);
  // `base` with the shown values of the settings that apply (a setting the shown config leaves without
  // effect keeps its value, so that a change of another setting never shows up as a change of it).
  EngineConfig read(EngineConfig base) const;
  // A field is enabled where its setting applies to the shown config; the drafter page follows the mode.
  void refresh_enabled();
  // What the shown choice still lacks before it can run ("" when complete): a draft mode without its
  // file, early exit without its layers.
  QString missing() const;
  // Calls `changed` when a choice changes or an edit ends on a new value.
  void on_change(QObject* context, const std::function<void()>& changed);
  // The spin boxes' current values become the "applied" ones (no change until edited again).
  void mark_applied();
  // Sets each widget's objectName to `prefix` + its setting's key ("kv", "block_size", ..., "spec",
  // "draft_model"), and the drafter's to `prefix` + "drafter".
  void name_widgets(const QString& prefix);
};

}  // namespace inferscope::gui
