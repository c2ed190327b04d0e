// A scroll area that gives `content` the full width and scrolls it vertically only: plots and
// toggles keep a readable size and scroll instead of squeezing (the dashboard in the Chat and Compare
// tabs, the config panel). Its scroll bar shows whenever the content is taller than the view, with a
// handle that stands out from the groove, so what lies below the view is plainly within reach.
#pragma once
#include <QScrollArea>

namespace inferscope::gui {

QScrollArea* vertical_scroll(QWidget* content);

}  // namespace inferscope::gui
