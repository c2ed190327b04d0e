#include "gui/help/help_button.h"

#include <QEvent>

namespace inferscope::gui {

namespace {

constexpr int kMargin = 3;  // from the host's edges, pixels

}  // namespace

HelpButton::HelpButton(const HelpText& help, QWidget* parent)
    : QToolButton(parent), popup_(new HelpPopup(help_html(help), this)) {
  setObjectName(QStringLiteral("help_") + QLatin1String(help.key));
  setText(QStringLiteral("?"));
  setToolTip(help_html(help));
  setCursor(Qt::WhatsThisCursor);
  setAutoRaise(true);
  setFixedSize(18, 18);
  setStyleSheet(QStringLiteral("QToolButton { font-weight: bold; color: #1d4ed8; border: 1px solid #93c5fd; "
                               "border-radius: 9px; background: #eff6ff; }"));
  connect(this, &QToolButton::clicked, this, &HelpButton::toggle_popup);
}

void HelpButton::toggle_popup() {
  if (popup_->isVisible()) {
    popup_->hide();
    return;
  }
  // under the button, right-aligned with it (buttons sit in their host's top-right corner)
  popup_->show_beside(QRect(mapToGlobal(QPoint(0, 0)), size()));
}

void HelpButton::pin_to_corner() {
  parentWidget()->installEventFilter(this);
  move_to_corner();
  raise();
}

void HelpButton::move_to_corner() { move(parentWidget()->width() - width() - kMargin, kMargin); }

bool HelpButton::eventFilter(QObject* watched, QEvent* event) {
  if (watched == parentWidget() && event->type() == QEvent::Resize) move_to_corner();
  return false;
}

HelpButton* attach_help(QWidget* host, const HelpText& help) {
  host->setToolTip(help_html(help));
  host->setWhatsThis(help_html(help));
  auto* button = new HelpButton(help, host);
  button->pin_to_corner();
  return button;
}

}  // namespace inferscope::gui
