#include "gui/plot/plot_units.h"

#include <cmath>
#include <utility>

namespace inferscope::gui {

QString format_value(double value, Unit unit) { return QString::fromStdString(format_metric(value, unit)); }

QString UnitTicker::getTickLabel(double tick, const QLocale& locale, QChar format_char, int precision) {
  switch (unit()) {
    case Unit::Seconds:
      // Ticks below a second read as ms (the step-time axes); whole seconds keep the default.
      if (std::fabs(tick) < 1 && tick != 0) return QString::number(tick * 1e3, 'g', 4) + QStringLiteral(" ms");
      return QCPAxisTicker::getTickLabel(tick, locale, format_char, precision) + QStringLiteral(" s");
    case Unit::Fraction:
      return QString::number(tick * 100, 'g', 4) + QStringLiteral("%");
    case Unit::Bytes: {
      const auto [v, name] = binary_scaled(tick);
      return QString::number(v, 'g', 4) + QLatin1Char(' ') + QLatin1String(name);
    }
    case Unit::BytesPerSecond:
    case Unit::TokensPerSecond:
    case Unit::PerSecond:
    case Unit::Flops:
    case Unit::FlopsPerSecond:
    case Unit::FlopsPerByte:
    case Unit::Count:
    case Unit::Tokens:
      break;
  }
  return QCPAxisTicker::getTickLabel(tick, locale, format_char, precision);
}

double UnitTicker::getTickStep(const QCPRange& range) {
  if (unit() != Unit::Bytes) return QCPAxisTicker::getTickStep(range);
  // Decimal-round steps of the binary unit the range is counted in (10 KiB, 256 KiB -> 200 KiB...).
  double scale = 1;
  while (range.size() / scale >= 2048) scale *= 1024;
  return QCPAxisTicker::getTickStep(QCPRange(range.lower / scale, range.upper / scale)) * scale;
}

QString LogUnitTicker::getTickLabel(double tick, const QLocale&, QChar, int) {
  // Time decades read as time ("10 ms", "100 µs"); other units by their SI prefix.
  if (unit() == Unit::Seconds) return format_value(tick, Unit::Seconds);
  const auto [v, prefix] = si_scaled(tick);
  const QString number = QString::number(v, 'g', 3);
  return *prefix ? number + QLatin1Char(' ') + QLatin1String(prefix) : number;
}

void set_axis_unit(QCPAxis* axis, Unit unit) { axis->setTicker(QSharedPointer<UnitTicker>::create(unit)); }

void set_log_axis_unit(QCPAxis* axis, Unit unit) {
  axis->setScaleType(QCPAxis::stLogarithmic);
  axis->setTicker(QSharedPointer<LogUnitTicker>::create(unit));
}

Unit unit_of(const QCPAxis* axis) {
  const auto* ticker = dynamic_cast<const TickerUnit*>(axis->ticker().data());
  return ticker ? ticker->unit() : Unit::Count;
}

}  // namespace inferscope::gui
