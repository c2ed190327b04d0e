// Units of the dashboard's axes: values stay in the engine's units (seconds, fractions 0..1, bytes)
// in the data and the CSV; only the tick labels and hover text are formatted for people.
#pragma once
#include <QString>
#include <qcustomplot.h>

namespace inferscope::gui {

enum class Unit { Count, Seconds, Fraction, Bytes, PerSecond };

// Formats one exact value ("12.3 ms", "41.2 %", "1.50 MiB", "96.4 tok/s", "37").
QString format_value(double value, Unit unit);

// Tick labels in `unit` (seconds as ms below one second, fractions as percent, bytes as KiB/MiB).
class UnitTicker : public QCPAxisTicker {
 public:
  explicit UnitTicker(Unit unit) : unit_(unit) {}
  Unit unit() const { return unit_; }

 protected:
  QString getTickLabel(double tick, const QLocale& locale, QChar format_char, int precision) override;
  double getTickStep(const QCPRange& range) override;  // bytes: round steps of KiB, MiB, GiB

 private:
  Unit unit_;
};

// Gives `axis` a UnitTicker; unit_of() reads it back (Count for any other ticker).
void set_axis_unit(QCPAxis* axis, Unit unit);
Unit unit_of(const QCPAxis* axis);

}  // namespace inferscope::gui
