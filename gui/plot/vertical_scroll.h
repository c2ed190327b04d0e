// A scroll area that gives `content` the full width and scrolls it vertically only: plots keep a
// readable minimum height and scroll instead of squeezing (the dashboard in the Chat and Compare tabs).
#pragma once
#include <QScrollArea>

namespace inferscope::gui {

QScrollArea* vertical_scroll(QWidget* content);

}  // namespace inferscope::gui
