#include "gui/plot/vertical_scroll.h"

#include <QScrollArea>
#include <QScrollBar>

namespace inferscope::gui {

QScrollArea* vertical_scroll(QWidget* content) {
  auto* scroll = new QScrollArea;
  scroll->setWidget(content);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  // The default style's handle is nearly as pale as its groove: at 1680x1050 a cut-off last row of
  // plots looked unreachable. A mid-grey handle on a pale groove, without arrow buttons.
  scroll->verticalScrollBar()->setStyleSheet(
      "QScrollBar:vertical { width:12px; background:#eceff3; margin:0; }"
      "QScrollBar::handle:vertical { background:#9ca3af; min-height:32px; border-radius:4px; margin:2px; }"
      "QScrollBar::handle:vertical:hover { background:#6b7280; }"
      "QScrollBar::add-line:vertical, QScrollBar::sub-line:vertical { height:0; }"
      "QScrollBar::add-page:vertical, QScrollBar::sub-page:vertical { background:none; }");
  return scroll;
}

}  // namespace inferscope::gui
