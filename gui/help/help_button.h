// A small "?" button that shows a help text (help_texts.h) in a popup when clicked, and as its
// tooltip on hover. attach_help() puts one in a widget's top-right corner and gives the widget the
// same tooltip and What's This text.
#pragma once
#include <QToolButton>

#include "gui/help/help_texts.h"

class QLabel;

namespace inferscope::gui {

class HelpButton : public QToolButton {
  Q_OBJECT
 public:
  HelpButton(const HelpText& help, QWidget* parent);
  // The popup the click shows (hidden until then; it closes on the next click anywhere).
  QLabel* popup() const { return popup_; }
  // Keeps the button in the top-right corner of its parent as the parent resizes.
  void pin_to_corner();

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void show_popup();
  void move_to_corner();
  QLabel* popup_;
};

// A HelpButton for `help` pinned to `host`'s top-right corner; `host` gets the help as its tooltip.
HelpButton* attach_help(QWidget* host, const HelpText& help);

}  // namespace inferscope::gui
