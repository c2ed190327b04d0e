// Units of the dashboard's axes: values stay in the engine's units (seconds, fractions 0..1, bytes)
// in the data and the CSV; only the tick labels and hover text are formatted for people.
#pragma once
#include <QString>
#include <qcustomplot.h>

#include "core/common/metric_unit.h"

namespace inferscope::gui {

// The units are core/common/metric_unit.h's; so is the text of one value.
using Unit = MetricUnit;

// format_metric as a QString ("12.3 ms", "41.2 %", "1.50 MiB", "96.4 tok/s", "37").
QString format_value(double value, Unit unit);

// The unit an axis ticker labels in: unit_of() reads it back from any ticker that has one.
class TickerUnit {
 public:
  explicit TickerUnit(Unit unit) : unit_(unit) {}
  virtual ~TickerUnit() = default;
  Unit unit() const { return unit_; }

 private:
  Unit unit_;
};

// Tick labels in `unit` (seconds as ms below one second, fractions as percent, bytes as KiB/MiB).
class UnitTicker : public QCPAxisTicker, public TickerUnit {
 public:
  explicit UnitTicker(Unit unit) : TickerUnit(unit) {}

 protected:
  QString getTickLabel(double tick, const QLocale& locale, QChar format_char, int precision) override;
  double getTickStep(const QCPRange& range) override;  // bytes: round steps of KiB, MiB, GiB
};

// Decades on a logarithmic axis (the roofline's), labelled with SI prefixes ("10 G", "1 k", "0.1"),
// or as times for seconds ("10 ms", "100 µs").
class LogUnitTicker : public QCPAxisTickerLog, public TickerUnit {
 public:
  explicit LogUnitTicker(Unit unit) : TickerUnit(unit) {}

 protected:
  QString getTickLabel(double tick, const QLocale& locale, QChar format_char, int precision) override;
};

// Gives `axis` a UnitTicker (a LogUnitTicker and a logarithmic scale with set_log_axis_unit);
// unit_of() reads either back (Count for any other ticker).
void set_axis_unit(QCPAxis* axis, Unit unit);
void set_log_axis_unit(QCPAxis* axis, Unit unit);
Unit unit_of(const QCPAxis* axis);

}  // namespace inferscope::gui
