#include "gui/plot/event_marks.h"

#include <algorithm>
#include <qcustomplot.h>

namespace inferscope::gui {

namespace {

const QColor kMarkColor(55, 65, 81);

constexpr const char* kLabelName = "event_mark_label";
constexpr int kLabelPointSize = 7;

// Lays the labels out for the plot's current range: those in the right half of the time range hang
// left of their line (so none is clipped), and a label that would overlap an earlier one moves down
// a row.
void place_labels(QCustomPlot* plot) {
  const double middle = plot->xAxis->range().center();
  const double height = std::max(1, plot->axisRect()->height());
  std::vector<double> row_ends;  // per row: the pixel where its last label ends
  for (int i = 0; i < plot->itemCount(); ++i) {
    QCPAbstractItem* item = plot->item(i);
    if (item->objectName() != QLatin1String(kLabelName)) continue;
    auto* label = static_cast<QCPItemText*>(item);
    const double key = label->position->key();
    const bool left_of_line = key > middle;
    const QFontMetrics metrics(label->font());
    const double x = plot->xAxis->coordToPixel(key), width = metrics.horizontalAdvance(label->text()) + 8;
    const double from = left_of_line ? x - width : x;
    size_t row = 0;
    while (row < row_ends.size() && row_ends[row] > from) ++row;
    label->setVisible(row < static_cast<size_t>(EventMarks::kMaxRows));
    if (!label->visible()) continue;
    if (row == row_ends.size()) row_ends.push_back(0);
    row_ends[row] = from + width;
    label->setPositionAlignment((left_of_line ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignTop);
    label->position->setCoords(key, static_cast<double>(row) * (metrics.height() + 2) / height);
  }
}

}  // namespace

EventMarks::EventMarks(QCustomPlot* plot) : plot_(plot) {
  QObject::connect(plot, &QCustomPlot::beforeReplot, plot, [plot] { place_labels(plot); });
}

void EventMarks::set(const QVector<TimeMark>& marks) {
  for (QCPItemStraightLine* line : lines_) plot_->removeItem(line);
  for (QCPItemText* label : labels_) plot_->removeItem(label);
  lines_.clear();
  labels_.clear();
  QFont font = plot_->font();
  font.setPointSize(kLabelPointSize);
  for (const TimeMark& mark : marks) {
    // A straight line through two points at the same time spans the plot's whole height.
    auto* line = new QCPItemStraightLine(plot_);
    line->setObjectName(QStringLiteral("event_mark"));
    line->setPen(QPen(kMarkColor, 1.2, Qt::DotLine));
    line->point1->setCoords(mark.time_s, 0);
    line->point2->setCoords(mark.time_s, 1);
    line->setSelectable(false);
    lines_.push_back(line);
    // The label hangs from the top of the axis rect beside the line.
    auto* label = new QCPItemText(plot_);
    label->setObjectName(QLatin1String(kLabelName));
    label->position->setTypeX(QCPItemPosition::ptPlotCoords);
    label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    label->position->setCoords(mark.time_s, 0.0);
    label->setPadding(QMargins(3, 1, 3, 1));
    label->setBrush(QColor(255, 255, 255, 160));
    label->setColor(kMarkColor);
    label->setFont(font);
    label->setText(mark.label);
    label->setSelectable(false);
    labels_.push_back(label);
  }
}

bool EventMarks::any_in(double from_s, double to_s) const {
  return std::any_of(lines_.begin(), lines_.end(), [&](const QCPItemStraightLine* line) {
    return line->point1->key() >= from_s && line->point1->key() <= to_s;
  });
}

int EventMarks::label_band_pixels() const {
  QFont font = plot_->font();
  font.setPointSize(kLabelPointSize);
  return kMaxRows * (QFontMetrics(font).height() + 2) + 4;
}

}  // namespace inferscope::gui
