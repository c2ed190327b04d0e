#include "gui/help/help_button.h"

#include <QEvent>
#include <QLabel>

namespace inferscope::gui {

namespace {

constexpr int kMargin = 3;           // from the host's edges, pixels
constexpr int kPopupWidth = 380;     // the popup wraps its text at this width

}  // namespace

HelpButton::HelpButton(const HelpText& help, QWidget* parent) : QToolButton(parent), popup_(new QLabel(this, Qt::Popup)) {
  setObjectName(QStringLiteral("help_") + QLatin1String(help.key));
  setText(QStringLiteral("?"));
  setToolTip(help_html(help));
  setCursor(Qt::WhatsThisCursor);
  setAutoRaise(true);
  setFixedSize(18, 18);
  setStyleSheet(QStringLiteral("QToolButton { font-weight: bold; color: #1d4ed8; border: 1px solid #93c5fd; "
                               "border-radius: 9px; background: #eff6ff; }"));
  popup_->setObjectName(QStringLiteral("help_popup"));
  popup_->setTextFormat(Qt::RichText);
  popup_->setText(help_html(help));
  popup_->setWordWrap(true);
  popup_->setFixedWidth(kPopupWidth);
  popup_->setMargin(8);
  popup_->setStyleSheet(QStringLiteral("QLabel { background: #fffbea; color: #1f2937; border: 1px solid #d1b64b; }"));
  connect(this, &QToolButton::clicked, this, &HelpButton::show_popup);
}

void HelpButton::show_popup() {
  popup_->adjustSize();
  // Under the button, right-aligned with it (buttons sit in their host's top-right corner).
  QPoint at = mapToGlobal(QPoint(width(), height()));
  at.rx() -= popup_->width();
  popup_->move(at);
  popup_->show();
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
