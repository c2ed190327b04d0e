// The dashboard's common plot furniture: a titled QCustomPlot with its help (title, tooltip and a "?"
// button from gui/help/help_texts.h), a small legend, horizontal drag and Ctrl+wheel zoom (the plain
// wheel scrolls what holds the chart), a centred note for "no data yet", and graphs in a consistent
// style.
#pragma once
#include <QColor>
#include <QString>
#include <qcustomplot.h>

#include "gui/plot/plot_units.h"

namespace inferscope::gui {

struct PlotSpec {
  const char* name;  // objectName (export file names, plots() lookups) and its help_text() key
  QString y_label;
  Unit y_unit = Unit::Count;
};

// Gives `plot` the furniture, its x axis "seconds since engine start"; returns its note item.
QCPItemText* setup_plot(QCustomPlot* plot, const PlotSpec& spec);
// A new plot with setup_plot(); its note item is returned through `note`.
QCustomPlot* make_plot(QWidget* parent, const PlotSpec& spec, QCPItemText** note);
// The legend, small, in its own row at `row` of the plot's layout (over the axis rect, never on the data),
// up to 3 entries per line as its width allows (fit_legend_to_width).
void legend_in_own_row(QCustomPlot* plot, int row);
// The legend shows as many entries per line as the plot's width holds, `most` at most (at least
// one), and fits again whenever the plot is resized or refit_legend() is called (its names changed).
void fit_legend_to_width(QCustomPlot* plot, int most);
void refit_legend(QCustomPlot* plot);
// From now on the plot's minimum height is the one it has plus a line's height for each legend line
// after the first and the tick labels of a visible top axis: a plot whose size nothing else sets
// keeps its data's height however its legend wraps.
void grow_with_legend(QCustomPlot* plot);
// A second run on its own clock: the top axis shows with tick labels like the bottom one's, titled
// `label` (none: a title would take a short chart's height); hidden when `shown` is false.
void show_top_time_axis(QCustomPlot* plot, bool shown, const QString& label = {});
// The plain wheel over `plot` scrolls what holds it (a scroll area), as everywhere else in the window;
// Ctrl+wheel reaches the plot (its zoom, where it has one).
void scroll_with_wheel(QCustomPlot* plot);

enum class Look { Line, Scatter, Area };
// A graph on (key, value) axes of `plot` (default: x and y), named for the legend and the CSV.
QCPGraph* add_graph(QCustomPlot* plot, const QString& name, QColor color, Look look, QCPAxis* value_axis = nullptr);
// A dashed copy of `graph`'s look for the comparison overlay, hidden until an overlay is set.
QCPGraph* add_overlay_graph(QCustomPlot* plot, const QCPGraph* like);
QCPBars* add_bars(QCustomPlot* plot, const QString& name, QColor color);
// Vertical lines at the times where preemptions happened (value = how many), on an invisible axis
// whose range makes every line span the plot's full height.
QCPGraph* add_preemption_marks(QCustomPlot* plot);

}  // namespace inferscope::gui
