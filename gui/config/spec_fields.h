// The speculative-decoding toggle as editable widgets (part of ConfigFields, so the config panel and
// the comparison's editors share it): the mode, k, what drafts (the n-gram sizes, the draft model
// file, the self-quant level or the early-exit layers: one page per mode) and the draft p-min.
#pragma once
#include <QString>
#include <functional>
#include <vector>

#include "core/spec/spec_config.h"
#include "gui/config/field_widgets.h"

class QComboBox;
class QDoubleSpinBox;
class QObject;
class QSpinBox;
class QStackedWidget;

namespace inferscope::gui {

class FilePicker;

struct SpecFields {
  SpecFields();

  QComboBox* mode;
  QSpinBox* k;
  QStackedWidget* drafter;  // one page per mode, in SpecMode order
  QSpinBox *ngram_min, *ngram_max, *draft_layers;
  FilePicker* draft_model;
  QComboBox* draft_quant;
  QDoubleSpinBox* draft_p_min;

  // The toggles in display order, in the section "Speculative decoding".
  std::vector<ToggleRow> rows() const;

  // Shows `spec`; ConfigFields::show then marks the values applied and refreshes what is enabled.
  void show(const SpecConfig& spec);
  SpecConfig read(SpecConfig base) const;
  // The drafter page follows the mode; k and p-min are enabled where the mode uses them.
  void refresh_enabled();
  // What the shown choice still lacks before it can run ("" when complete): a draft mode without its file.
  QString missing() const;
  void on_change(QObject* context, const std::function<void()>& changed);
  void mark_applied();
  void name_widgets(const QString& prefix);
};

}  // namespace inferscope::gui
