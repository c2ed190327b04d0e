// The window's layout kept between runs in QSettings: its geometry, its toolbars' state and the sizes
// of every splitter that has an objectName ("window/geometry", "window/state", "window/splitter/NAME").
#pragma once
#include <QRect>
#include <QSettings>

class QMainWindow;

namespace inferscope::gui {

void save_window_layout(QSettings& settings, const QMainWindow& window);
// Restores what save_window_layout kept; anything not stored keeps its current value.
void restore_window_layout(const QSettings& settings, QMainWindow& window);

// Where a window of geometry `window` goes on a screen whose free area is `available`: its size capped
// at that area's, moved inside it (a window that already fits stays where it is).
QRect fitted_to_screen(const QRect& window, const QRect& available);
// Fits the window, before it is first shown, to the free area of the screen it opens on: the
// 1600x1000 default or a saved geometry from a larger screen would run past a laptop's 1280x720.
void fit_window_to_screen(QMainWindow& window);

}  // namespace inferscope::gui
