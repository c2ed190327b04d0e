// Hover text for a QCustomPlot: the exact values at the data point under the mouse (every series
// with a point at that time), or the plot's own description away from the data.
#pragma once
#include <QPointF>
#include <QString>
#include <functional>

class QCPAbstractPlottable;
class QCustomPlot;

namespace inferscope::gui {

// How close (pixels) the mouse must be to a point for its values to show.
inline constexpr double kHoverRadiusPx = 12;

struct HoverHit {
  QCPAbstractPlottable* plottable = nullptr;  // null: no point within kHoverRadiusPx
  int index = -1;                              // of the point in its plottable's data
};
// The visible, non-NaN data point nearest `pos` (widget pixels) within kHoverRadiusPx.
HoverHit point_under(QCustomPlot& plot, QPointF pos);

// The values under `pos` (widget pixels), or an empty string when no point is near. A plottable's
// QStringList property "point_labels" (one per data point) names its points ("request 3"); a plot's
// QString property "key_name" names its key where it is not time ("draft position"), formatted in
// the key axis's unit when it has one.
QString hover_text(QCustomPlot& plot, QPointF pos);

// The values under a position, or "" (then the plot's toolTip(), its description, shows instead).
using HoverText = std::function<QString(QPointF pos)>;
// Shows `text` (default: hover_text()) as the plot's tooltip, following the mouse.
void install_hover(QCustomPlot* plot, HoverText text = {});

}  // namespace inferscope::gui
