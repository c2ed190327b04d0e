// Hover text for a QCustomPlot: the exact values at the data point under the mouse (every series
// with a point at that time), or the plot's own description away from the data.
#pragma once
#include <QPointF>
#include <QString>

class QCustomPlot;

namespace inferscope::gui {

// How close (pixels) the mouse must be to a point for its values to show.
inline constexpr double kHoverRadiusPx = 12;

// The values under `pos` (widget pixels), or an empty string when no point is near. A plottable's
// QStringList property "point_labels" (one per data point) names its points ("request 3"); a plot's
// QString property "key_name" names its key where it is not time ("draft position").
QString hover_text(QCustomPlot& plot, QPointF pos);

// Shows hover_text() (else the plot's toolTip(), its description) as the plot's tooltip.
void install_hover(QCustomPlot* plot);

}  // namespace inferscope::gui
