// Writing a plot out: its data as CSV (one row per point: series, time, value in the engine's units)
// and its picture as PNG, each written atomically (QSaveFile: a temp file renamed into place).
#pragma once
#include <QByteArray>
#include <QString>
#include <QStringList>
#include <functional>

class QCustomPlot;

namespace inferscope::gui {

// "series,<x axis label>,value" then one row per non-NaN point of every visible plottable.
QByteArray plot_csv(QCustomPlot& plot);
// A plot whose points are not (time, value) pairs writes its own CSV (the request timeline: bars with
// a start and an end); export_plot uses it instead of plot_csv.
class OwnCsv {
 public:
  virtual ~OwnCsv() = default;
  virtual QByteArray csv() const = 0;
};
// Writes `bytes` to `path` atomically; false (and `error` set) when it cannot.
bool save_atomically(const QString& path, const QByteArray& bytes, QString* error);
// Writes NAME.png and NAME.csv (NAME = the plot's objectName; the CSV is OwnCsv::csv() where the plot
// is an OwnCsv, else plot_csv) into `dir`; returns the paths written.
// Throws std::runtime_error naming the file when one cannot be written.
QStringList export_plot(QCustomPlot& plot, const QString& dir);
// Gives `plot` a right-click menu: "Export this plot…" (export_plot) and "Export every plot…"
// (export_all), each into a folder the user picks; failures show a message box naming the file.
void add_export_menu(QCustomPlot& plot, std::function<QStringList(const QString& dir)> export_all);

}  // namespace inferscope::gui
