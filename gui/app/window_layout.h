// The window's layout kept between runs in QSettings: its geometry, its toolbars' state and the sizes
// of every splitter that has an objectName ("window/geometry", "window/state", "window/splitter/NAME").
#pragma once
#include <QSettings>

class QMainWindow;

namespace inferscope::gui {

void save_window_layout(QSettings& settings, const QMainWindow& window);
// Restores what save_window_layout kept; anything not stored keeps its current value.
void restore_window_layout(const QSettings& settings, QMainWindow& window);

}  // namespace inferscope::gui
