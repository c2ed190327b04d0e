// The popup a "?" button shows: a help text in a tooltip-style window that never grabs the mouse or
// the keyboard, so nothing it does can lock the app. It closes on Escape, on any click outside its
// owner (the click still reaches what it was aimed at; the owner's own click toggles it), when the
// app loses focus and when the owner's window is hidden, and it is placed inside the screen's
// available area.
#pragma once
#include <QFrame>

class QLabel;

namespace inferscope::gui {

class HelpPopup : public QFrame {
  Q_OBJECT
 public:
  HelpPopup(const QString& html, QWidget* owner);
  QString text() const;
  // Shows the popup under `anchor` (the global rect of what opened it), its right edge on the anchor's;
  // above it when there is no room below, and moved onto the screen as needed, never over the anchor.
  void show_beside(const QRect& anchor);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;
  void showEvent(QShowEvent* event) override;
  void hideEvent(QHideEvent* event) override;

 private:
  QLabel* label_;
};

}  // namespace inferscope::gui
