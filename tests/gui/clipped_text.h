// Finding text a widget's size cuts off: labels, buttons, group titles, table headers and chart axis
// titles and legends, each measured against the widget that draws it. Text that is cut but whose
// tooltip holds it whole (or that ends in "…" with a tooltip) is not counted: the user can still read it.
#pragma once
#include <QAbstractButton>
#include <QAbstractItemModel>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QStyle>
#include <QTextDocumentFragment>
#include <QToolButton>
#include <QWidget>
#include <qcustomplot.h>
#include <string>
#include <vector>

namespace inferscope::gui::test {

// What `text` reads as, rich text or plain, with its white space simplified.
inline QString plain_text(const QString& text) {
  return (Qt::mightBeRichText(text) ? QTextDocumentFragment::fromHtml(text).toPlainText() : text).simplified();
}

// The widget as a test names it: its class, objectName and the start of its text.
inline std::string describe(const QWidget* w, const QString& text) {
  QString plain = plain_text(text);
  if (plain.size() > 60) plain = plain.left(60) + "…";
  return std::string(w->metaObject()->className()) + " '" + w->objectName().toStdString() + "' \"" + plain.toStdString() + "\"";
}

// Whether a tooltip lets the user read text the widget cuts.
inline bool tooltip_gives(const QString& tooltip, const QString& text) {
  if (tooltip.isEmpty()) return false;
  const QString plain = plain_text(text);
  return plain.contains(QChar(0x2026)) || tooltip.simplified().contains(plain);
}

// What of one widget's own text its size cuts off, in words; empty when it shows whole.
inline std::string clipped_text_of(QWidget* w) {
  constexpr int kSlack = 1;  // a pixel of rounding
  if (auto* label = qobject_cast<QLabel*>(w)) {
    const QString text = label->text();
    if (text.isEmpty() || tooltip_gives(label->toolTip(), text)) return {};
    if (label->wordWrap()) {
      const int needed = label->heightForWidth(label->width());
      if (label->height() + kSlack < needed)
        return describe(w, text) + " wraps into " + std::to_string(label->height()) + " px of the " + std::to_string(needed) + " it needs";
      return {};
    }
    const QSize needed = label->sizeHint();
    if (label->width() + kSlack < needed.width())
      return describe(w, text) + " is " + std::to_string(label->width()) + " px wide and needs " + std::to_string(needed.width());
    if (label->height() + kSlack < needed.height())
      return describe(w, text) + " is " + std::to_string(label->height()) + " px high and needs " + std::to_string(needed.height());
    return {};
  }
  if (auto* button = qobject_cast<QAbstractButton*>(w)) {
    const QString text = button->text();
    auto* tool = qobject_cast<QToolButton*>(w);
    if (text.isEmpty() || (tool && tool->toolButtonStyle() == Qt::ToolButtonIconOnly) || tooltip_gives(button->toolTip(), text)) return {};
    const int needed = button->sizeHint().width();
    if (button->width() + kSlack < needed)
      return describe(w, text) + " is " + std::to_string(button->width()) + " px wide and needs " + std::to_string(needed);
    return {};
  }
  if (auto* box = qobject_cast<QGroupBox*>(w)) {
    const QString title = box->title();
    const int needed = box->fontMetrics().horizontalAdvance(title) + 16;
    if (!title.isEmpty() && box->width() + kSlack < needed)
      return describe(w, title) + " (title) is " + std::to_string(box->width()) + " px wide and needs " + std::to_string(needed);
    return {};
  }
  if (auto* header = qobject_cast<QHeaderView*>(w)) {
    if (header->orientation() != Qt::Horizontal || !header->model()) return {};
    const int margin = 2 * header->style()->pixelMetric(QStyle::PM_HeaderMargin, nullptr, header);
    for (int i = 0; i < header->count(); ++i) {
      if (header->isSectionHidden(i)) continue;
      const QString text = header->model()->headerData(i, Qt::Horizontal).toString();
      const QString tooltip = header->model()->headerData(i, Qt::Horizontal, Qt::ToolTipRole).toString();
      const int needed = header->fontMetrics().horizontalAdvance(text) + margin;
      if (!text.isEmpty() && header->sectionSize(i) + kSlack < needed && !tooltip_gives(tooltip, text))
        return describe(w, text) + " (column " + std::to_string(i) + ") is " + std::to_string(header->sectionSize(i)) +
               " px wide and needs " + std::to_string(needed);
    }
    return {};
  }
  if (auto* plot = qobject_cast<QCustomPlot*>(w)) {
    for (QCPAxisRect* rect : plot->axisRects()) {
      for (QCPAxis* axis : rect->axes()) {
        if (!axis->visible() || axis->label().isEmpty()) continue;
        const int length = axis->orientation() == Qt::Horizontal ? rect->width() : rect->height();
        const int needed = QFontMetrics(axis->labelFont()).horizontalAdvance(axis->label());
        if (length < needed)
          return describe(w, axis->label()) + " (axis title) has " + std::to_string(length) + " px of the " + std::to_string(needed) + " it needs";
      }
    }
    if (plot->legend && plot->legend->visible() && !plot->rect().contains(plot->legend->outerRect()))
      return describe(w, "legend") + " runs past its chart";
    return {};
  }
  return {};
}

// Every cut text among the visible widgets under `root` (root included).
inline std::vector<std::string> clipped_texts(QWidget* root) {
  std::vector<std::string> out;
  QList<QWidget*> widgets = root->findChildren<QWidget*>();
  widgets.prepend(root);
  for (QWidget* w : widgets) {
    if (!w->isVisible() || w->width() <= 0 || w->height() <= 0 || w->objectName().startsWith("qt_")) continue;
    if (std::string what = clipped_text_of(w); !what.empty()) out.push_back(std::move(what));
  }
  return out;
}

}  // namespace inferscope::gui::test
