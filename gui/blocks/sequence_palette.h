// A stable colour per key (a chat session's id): the first ten keys seen get ten well-separated
// colours, later ones hues spaced by the golden angle. A key keeps its colour for the palette's
// lifetime, so a chat session stays the same colour as its requests come and go.
#pragma once
#include <QColor>
#include <QHash>
#include <QString>

namespace inferscope::gui {

class SequencePalette {
 public:
  QColor color_for(const QString& key);

 private:
  QHash<QString, QColor> assigned_;
};

}  // namespace inferscope::gui
