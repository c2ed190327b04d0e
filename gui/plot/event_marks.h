// Moments worth a line on a time-axis chart (an engine configuration applied, new weights swapped
// in): a vertical dotted line across the plot at each time, with a short label at its top.
#pragma once
#include <QString>
#include <QVector>
#include <vector>

class QCPItemStraightLine;
class QCPItemText;
class QCustomPlot;

namespace inferscope::gui {

struct TimeMark {
  double time_s = 0;  // on the plot's x axis: seconds since the engine started
  QString label;      // a few words ("KV contiguous")
};

class EventMarks {
 public:
  // Labels stack in at most this many rows from the top; one that would need another is hidden
  // (its line stays; zooming in spreads the labels out).
  static constexpr int kMaxRows = 2;

  // Before each replot the labels are laid out for the visible range: those in its right half hang
  // left of their line (none is clipped), and one that would overlap an earlier one moves down a row.
  explicit EventMarks(QCustomPlot* plot);
  // Replaces the marks drawn with `marks` (items named "event_mark" and "event_mark_label").
  void set(const QVector<TimeMark>& marks);
  // True when a mark lies in `range` of the time axis.
  bool any_in(double from_s, double to_s) const;
  // The pixels the label rows take at the top of the axis rect: the headroom a value axis leaves
  // above its data so no label covers a point.
  int label_band_pixels() const;

 private:
  QCustomPlot* plot_;
  std::vector<QCPItemStraightLine*> lines_;
  std::vector<QCPItemText*> labels_;
};

}  // namespace inferscope::gui
