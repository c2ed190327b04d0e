// One QApplication per test binary on the offscreen platform (no display needed), made on first use.
// Set INFERSCOPE_SCREENSHOT_DIR to keep the widgets' rendered PNGs for a look.
#pragma once
#include <QApplication>
#include <QDir>
#include <QImage>
#include <QWidget>

namespace inferscope::gui::test {

inline QApplication& offscreen_app() {
  static int argc = 1;
  static char name[] = "inferscope_gui_test";
  static char* argv[] = {name, nullptr};
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  // Never destroyed: a static QApplication torn down by exit handlers crashes in QtGui's post routines.
  static QApplication* app = new QApplication(argc, argv);
  return *app;
}

// Renders `w` (QWidget::grab); also saves it as NAME.png under $INFERSCOPE_SCREENSHOT_DIR when set.
inline QImage render(QWidget& w, const QString& name) {
  QApplication::processEvents();  // queued replots and layouts first
  const QImage image = w.grab().toImage();
  const QString dir = qEnvironmentVariable("INFERSCOPE_SCREENSHOT_DIR");
  if (!dir.isEmpty() && QDir().mkpath(dir)) image.save(QDir(dir).filePath(name + QStringLiteral(".png")));
  return image;
}

// How many distinct colours an image holds (a blank or single-colour render has 1 or 2).
inline int distinct_colors(const QImage& image) {
  QSet<QRgb> seen;
  for (int y = 0; y < image.height(); y += 2)
    for (int x = 0; x < image.width(); x += 2) seen.insert(image.pixel(x, y));
  return static_cast<int>(seen.size());
}

}  // namespace inferscope::gui::test
