// A stable colour per sequence label: the first ten labels seen get ten well-separated colours, later
// ones hues spaced by the golden angle. A label keeps its colour for the palette's lifetime, so a
// chat session stays the same colour as its requests come and go.
#pragma once
#include <QColor>
#include <QHash>
#include <QString>

namespace inferscope::gui {

class SequencePalette {
 public:
  QColor color_for(const QString& label);

 private:
  QHash<QString, QColor> assigned_;
};

}  // namespace inferscope::gui
