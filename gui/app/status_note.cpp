#include "gui/app/status_note.h"

#include <QFontMetrics>
#include <QTimer>

namespace inferscope::gui {

StatusNote::StatusNote(QWidget* parent) : QLabel(parent), timer_(new QTimer(this)) {
  setObjectName("status_note");
  // Takes the room the figures leave and never asks for more: a long message is elided, not pushed on.
  setMinimumWidth(0);
  setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  timer_->setSingleShot(true);
  connect(timer_, &QTimer::timeout, this, [this] { show_message({}); });
}

void StatusNote::show_message(const QString& message, int timeout_ms) {
  message_ = message;
  setToolTip(message);
  elide();
  if (timeout_ms > 0) {
    timer_->start(timeout_ms);
  } else {
    timer_->stop();
  }
}

void StatusNote::resizeEvent(QResizeEvent* event) {
  QLabel::resizeEvent(event);
  elide();
}

void StatusNote::elide() { setText(fontMetrics().elidedText(message_, Qt::ElideRight, contentsRect().width())); }

}  // namespace inferscope::gui
