#include "gui/plot/plot_export.h"

#include <QBuffer>
#include <QDir>
#include <QFileDialog>
#include <QMenu>
#include <QMessageBox>
#include <QSaveFile>
#include <cmath>
#include <qcustomplot.h>
#include <stdexcept>

namespace inferscope::gui {

namespace {

// A CSV field: quoted when it holds a comma, quote or newline.
QByteArray csv_field(const QString& s) {
  QByteArray utf8 = s.toUtf8();
  if (!utf8.contains(',') && !utf8.contains('"') && !utf8.contains('\n')) return utf8;
  return '"' + utf8.replace("\"", "\"\"") + '"';
}

}  // namespace

QByteArray plot_csv(QCustomPlot& plot) {
  QByteArray out = "series," + csv_field(plot.xAxis->label().isEmpty() ? QStringLiteral("x") : plot.xAxis->label()) + ",value\n";
  for (int p = 0; p < plot.plottableCount(); ++p) {
    QCPAbstractPlottable* plottable = plot.plottable(p);
    QCPPlottableInterface1D* data = plottable->interface1D();
    if (!data || !plottable->visible()) continue;
    const QByteArray name = csv_field(plottable->name());
    for (int i = 0; i < data->dataCount(); ++i) {
      const double v = data->dataMainValue(i);
      if (std::isnan(v)) continue;  // a gap marker, not a measurement
      out += name + ',' + QByteArray::number(data->dataMainKey(i), 'g', 10) + ',' + QByteArray::number(v, 'g', 10) + '\n';
    }
  }
  return out;
}

bool save_atomically(const QString& path, const QByteArray& bytes, QString* error) {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit()) {
    if (error) *error = path + QStringLiteral(": ") + file.errorString();
    return false;
  }
  return true;
}

QStringList export_plot(QCustomPlot& plot, const QString& dir) {
  const QString base = QDir(dir).filePath(plot.objectName());
  QByteArray png;
  QBuffer buffer(&png);
  buffer.open(QIODevice::WriteOnly);
  const int w = std::max(plot.width(), 640), h = std::max(plot.height(), 360);
  if (!plot.toPixmap(w, h).save(&buffer, "PNG")) throw std::runtime_error((base + ".png: cannot render the plot").toStdString());
  QString error;
  const auto* own_csv = dynamic_cast<const OwnCsv*>(&plot);
  if (!save_atomically(base + QStringLiteral(".png"), png, &error) ||
      !save_atomically(base + QStringLiteral(".csv"), own_csv ? own_csv->csv() : plot_csv(plot), &error))
    throw std::runtime_error(error.toStdString());
  return {base + QStringLiteral(".png"), base + QStringLiteral(".csv")};
}

void add_export_menu(QCustomPlot& plot, std::function<QStringList(const QString& dir)> export_all) {
  plot.setContextMenuPolicy(Qt::CustomContextMenu);
  QObject::connect(&plot, &QWidget::customContextMenuRequested, &plot, [&plot, export_all](const QPoint& at) {
    QMenu menu(&plot);
    QAction* one = menu.addAction(QObject::tr("Export this plot (PNG + CSV)…"));
    menu.addAction(QObject::tr("Export every plot (PNG + CSV)…"));
    QAction* chosen = menu.exec(plot.mapToGlobal(at));
    if (!chosen) return;
    const QString dir = QFileDialog::getExistingDirectory(&plot, chosen->text());
    if (dir.isEmpty()) return;
    try {
      const QStringList files = chosen == one ? export_plot(plot, dir) : export_all(dir);
      QMessageBox::information(&plot, QObject::tr("Exported"), QObject::tr("Wrote %1 files into %2").arg(files.size()).arg(dir));
    } catch (const std::exception& e) {
      QMessageBox::warning(&plot, QObject::tr("Export failed"), QString::fromStdString(e.what()));
    }
  });
}

}  // namespace inferscope::gui
