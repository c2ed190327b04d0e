#include "gui/plot/vertical_scroll.h"

#include <QScrollArea>

namespace inferscope::gui {

QScrollArea* vertical_scroll(QWidget* content) {
  auto* scroll = new QScrollArea;
  scroll->setWidget(content);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  return scroll;
}

}  // namespace inferscope::gui
