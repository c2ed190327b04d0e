#include "gui/plot/plot_units.h"

#include <cmath>
#include <utility>

namespace inferscope::gui {

namespace {

// Fewer digits for larger numbers: 3 significant figures without scientific notation.
QString three_figures(double v) {
  const double a = std::fabs(v);
  const int decimals = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3;
  return QString::number(v, 'f', decimals);
}

// `bytes` in the largest binary unit that keeps it at or above 1: the scaled value and the unit's name.
std::pair<double, const char*> binary_scaled(double bytes) {
  static const char* const kNames[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int i = 0;
  while (std::fabs(bytes) >= 1024 && i < 4) bytes /= 1024, ++i;
  return {bytes, kNames[i]};
}

// `v` with an SI prefix (k, M, G, T, P) that keeps it below 1000: the scaled value and the prefix.
std::pair<double, const char*> si_scaled(double v) {
  static const char* const kPrefixes[] = {"", "k", "M", "G", "T", "P"};
  int i = 0;
  while (std::fabs(v) >= 1000 && i < 5) v /= 1000, ++i;
  return {v, kPrefixes[i]};
}

}  // namespace

QString format_value(double value, Unit unit) {
  if (!std::isfinite(value)) return QStringLiteral("-");
  switch (unit) {
    case Unit::Seconds:
      if (std::fabs(value) < 1e-3 && value != 0) return three_figures(value * 1e6) + QStringLiteral(" µs");
      if (std::fabs(value) < 1) return three_figures(value * 1e3) + QStringLiteral(" ms");
      return three_figures(value) + QStringLiteral(" s");
    case Unit::Fraction:
      return QString::number(value * 100, 'f', 1) + QStringLiteral(" %");
    case Unit::Bytes: {
      const auto [v, name] = binary_scaled(value);
      return (std::fabs(value) < 1024 ? QString::number(v, 'f', 0) : three_figures(v)) + QLatin1Char(' ') + QLatin1String(name);
    }
    case Unit::BytesPerSecond: {
      const auto [v, prefix] = si_scaled(value);
      return three_figures(v) + QLatin1Char(' ') + QLatin1String(prefix) + QStringLiteral("B/s");
    }
    case Unit::PerSecond:
      return three_figures(value) + QStringLiteral(" tok/s");
    case Unit::Flops: {
      const auto [v, prefix] = si_scaled(value);
      return three_figures(v) + QLatin1Char(' ') + QLatin1String(prefix) + QStringLiteral("FLOP");
    }
    case Unit::FlopsPerSecond:
      return format_value(value, Unit::Flops) + QStringLiteral("/s");
    case Unit::FlopsPerByte:
      return three_figures(value) + QStringLiteral(" FLOP/B");
    case Unit::Count:
      break;
  }
  return value == std::round(value) ? QString::number(static_cast<qint64>(value)) : three_figures(value);
}

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
    case Unit::PerSecond:
    case Unit::Flops:
    case Unit::FlopsPerSecond:
    case Unit::FlopsPerByte:
    case Unit::Count:
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
