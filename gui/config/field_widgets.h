// Small builders shared by the toggle editors: a toggle's row, combo and spin boxes made the same
// way everywhere, and the "applied value" a spin box keeps so that only an edit that ends on a new
// value applies.
#pragma once
#include <QComboBox>
#include <QObject>
#include <QSpinBox>
#include <QString>
#include <QStringList>
#include <QWidget>
#include <functional>
#include <string_view>

namespace inferscope::gui {

// One toggle as an editor lays it out.
struct ToggleRow {
  QString section;  // "KV cache", "Compute", "Scheduler" or "Speculative decoding"
  QString label;
  QWidget* field;
  QString explanation;  // one line on what the toggle changes
  QString tooltip;      // the explanation and what a change costs the running engine
};

QString qtext(std::string_view s);
// The names of `values` in order (a combo box's items); `name` gives one value's.
template <typename Values, typename Name>
QStringList names_of(const Values& values, Name name) {
  QStringList out;
  for (const auto& v : values) out << qtext(name(v));
  return out;
}
QComboBox* combo(const QStringList& items);
QSpinBox* spin(int lo, int hi, int step, const QString& special = {}, const QString& suffix = {});

// The box's current value becomes its applied one.
template <typename Box>
void mark_applied(Box* box) {
  box->setProperty("applied", box->value());
}

// Calls `changed` when an edit of `box` ends on a value other than its applied one.
template <typename Box>
void on_new_value(Box* box, QObject* context, const std::function<void()>& changed) {
  QObject::connect(box, &Box::editingFinished, context, [box, changed] {
    if (box->value() != box->property("applied").template value<decltype(box->value())>()) changed();
  });
}

}  // namespace inferscope::gui
