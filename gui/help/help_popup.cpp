#include "gui/help/help_popup.h"

#include <QApplication>
#include <QEvent>
#include <QKeyEvent>
#include <QLabel>
#include <QScreen>
#include <QVBoxLayout>
#include <algorithm>

namespace inferscope::gui {

namespace {

constexpr int kPopupWidth = 380;  // the popup wraps its text at this width

}  // namespace

// Qt::ToolTip: a window of its own that takes neither focus nor a grab (a Qt::Popup grabs both).
HelpPopup::HelpPopup(const QString& html, QWidget* owner)
    : QFrame(owner, Qt::ToolTip | Qt::FramelessWindowHint), label_(new QLabel(this)) {
  setObjectName(QStringLiteral("help_popup"));
  setFrameShape(QFrame::Box);
  setStyleSheet(QStringLiteral("inferscope--gui--HelpPopup { background: #fffbea; border: 1px solid #d1b64b; } "
                               "QLabel { color: #1f2937; }"));
  label_->setTextFormat(Qt::RichText);
  label_->setText(html);
  label_->setWordWrap(true);
  label_->setMargin(8);
  label_->setOpenExternalLinks(true);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(label_);
  setFixedWidth(kPopupWidth);
}

QString HelpPopup::text() const { return label_->text(); }

void HelpPopup::show_beside(const QRect& anchor) {
  adjustSize();
  const QScreen* screen = QGuiApplication::screenAt(anchor.center());
  if (screen == nullptr) screen = parentWidget() != nullptr ? parentWidget()->screen() : QGuiApplication::primaryScreen();
  const QRect room = screen->availableGeometry();
  // Below the anchor where it fits, else above it: the "?" that opened it stays visible.
  const bool below = anchor.bottom() + height() < room.bottom();
  QPoint at(anchor.right() + 1 - width(), below ? anchor.bottom() + 1 : anchor.top() - height());
  // keep the whole popup on the screen's available area
  at.setX(std::clamp(at.x(), room.left(), std::max(room.left(), room.right() - width() + 1)));
  at.setY(std::clamp(at.y(), room.top(), std::max(room.top(), room.bottom() - height() + 1)));
  move(at);
  show();
  raise();
}

// While shown, every event of the app passes here first: Escape and any mouse press close the popup.
bool HelpPopup::eventFilter(QObject* watched, QEvent* event) {
  switch (event->type()) {
    case QEvent::KeyPress:
      if (static_cast<QKeyEvent*>(event)->key() == Qt::Key_Escape) {
        hide();
        return true;  // Escape was for the popup
      }
      break;
    case QEvent::MouseButtonPress:
      if (watched != parentWidget()) hide();  // a press on the "?" is left to its click, which toggles
      break;                                  // the click goes on to what it was aimed at
    case QEvent::ApplicationDeactivate:
      hide();
      break;
    case QEvent::Hide:
      if (watched == parentWidget()->window()) hide();
      break;
    default:
      break;
  }
  return false;
}

void HelpPopup::showEvent(QShowEvent* event) {
  qApp->installEventFilter(this);
  QFrame::showEvent(event);
}

void HelpPopup::hideEvent(QHideEvent* event) {
  qApp->removeEventFilter(this);
  QFrame::hideEvent(event);
}

}  // namespace inferscope::gui
