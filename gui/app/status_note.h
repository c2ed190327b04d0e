// The status bar's message: one line left of the figures (StatusFields), elided to the room the window
// leaves it, with the whole text as tooltip, and gone after its timeout. QStatusBar::showMessage
// draws a message cut off under the figures at laptop widths, with nothing to read the rest.
#pragma once
#include <QLabel>
#include <QString>

class QTimer;

namespace inferscope::gui {

class StatusNote : public QLabel {
  Q_OBJECT
 public:
  explicit StatusNote(QWidget* parent = nullptr);
  // Shows `message` until timeout_ms pass (0: until the next one).
  void show_message(const QString& message, int timeout_ms = 0);
  // The whole message shown now, empty when none.
  QString message() const { return message_; }

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void elide();
  QString message_;
  QTimer* timer_;
};

}  // namespace inferscope::gui
