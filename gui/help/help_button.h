// A small "?" button that shows a help text (help_texts.h) in a popup (help_popup.h) when clicked,
// and as its tooltip on hover. attach_help() puts one in a widget's top-right corner and gives the widget the
// same tooltip and What's This text.
#pragma once
#include <QToolButton>

#include "gui/help/help_popup.h"
#include "gui/help/help_texts.h"


namespace inferscope::gui {

class HelpButton : public QToolButton {
  Q_OBJECT
 public:
  HelpButton(const HelpText& help, QWidget* parent);
  // The popup a click shows and a second click hides (it also closes on Escape and other clicks).
  HelpPopup* popup() const { return popup_; }
  // Keeps the button in the top-right corner of its parent as the parent resizes.
  void pin_to_corner();

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void toggle_popup();
  void move_to_corner();
  HelpPopup* popup_;
};

// A HelpButton for `help` pinned to `host`'s top-right corner; `host` gets the help as its tooltip.
HelpButton* attach_help(QWidget* host, const HelpText& help);

}  // namespace inferscope::gui
