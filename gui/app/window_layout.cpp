#include "gui/app/window_layout.h"

#include <QMainWindow>
#include <QScreen>
#include <QSplitter>
#include <algorithm>

namespace inferscope::gui {
namespace {

const QString kGeometry = QStringLiteral("window/geometry");
const QString kState = QStringLiteral("window/state");

QString splitter_key(const QSplitter* splitter) { return "window/splitter/" + splitter->objectName(); }

}  // namespace

void save_window_layout(QSettings& settings, const QMainWindow& window) {
  settings.setValue(kGeometry, window.saveGeometry());
  settings.setValue(kState, window.saveState());
  for (const QSplitter* splitter : window.findChildren<QSplitter*>()) {
    if (!splitter->objectName().isEmpty()) settings.setValue(splitter_key(splitter), splitter->saveState());
  }
}

void restore_window_layout(const QSettings& settings, QMainWindow& window) {
  if (settings.contains(kGeometry)) window.restoreGeometry(settings.value(kGeometry).toByteArray());
  if (settings.contains(kState)) window.restoreState(settings.value(kState).toByteArray());
  for (QSplitter* splitter : window.findChildren<QSplitter*>()) {
    const QString key = splitter_key(splitter);
    if (!splitter->objectName().isEmpty() && settings.contains(key)) splitter->restoreState(settings.value(key).toByteArray());
  }
}

QRect fitted_to_screen(const QRect& window, const QRect& available) {
  QRect fitted(window.topLeft(), window.size().boundedTo(available.size()));
  // Slide it in from whichever edge it crosses.
  fitted.moveLeft(std::clamp(fitted.left(), available.left(), available.right() + 1 - fitted.width()));
  fitted.moveTop(std::clamp(fitted.top(), available.top(), available.bottom() + 1 - fitted.height()));
  return fitted;
}

void fit_window_to_screen(QMainWindow& window) {
  const QScreen* screen = window.screen();
  if (!screen) return;
  window.setGeometry(fitted_to_screen(window.geometry(), screen->availableGeometry()));
}

}  // namespace inferscope::gui
