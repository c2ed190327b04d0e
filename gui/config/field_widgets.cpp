#include "gui/config/field_widgets.h"

namespace inferscope::gui {

QString qtext(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

QComboBox* combo(const QStringList& items) {
  auto* box = new QComboBox;
  box->addItems(items);
  return box;
}

QSpinBox* spin(int lo, int hi, int step, const QString& special, const QString& suffix) {
  auto* box = new QSpinBox;
  box->setRange(lo, hi);
  box->setSingleStep(step);
  box->setSuffix(suffix);
  if (!special.isEmpty()) box->setSpecialValueText(special);
  return box;
}

}  // namespace inferscope::gui
