#include "gui/compare/compare_render.h"

#include <QBrush>
#include <QColor>
#include <QHeaderView>
#include <QTableWidget>
#include <algorithm>
#include <cmath>

#include "gui/compare/config_difference.h"
#include "gui/model/model_info_panel.h"

namespace inferscope::gui {
namespace {

QString html(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped().replace('\n', "<br>"); }

// One side's text: shared part, the marked token, the dimmed rest; a simulated side's placeholder tokens are no text.
QString side_html(const OutputSide& s) {
  if (s.simulated) return "<i style='color:#92400e;'>simulated: no text (a dry run generates placeholder tokens)</i>";
  QString out = html(s.common);
  if (!s.marked.empty()) {
    out += "<span style='background:#fde68a; color:#7c2d12; font-weight:bold;'>" + html(s.marked) + "</span>";
  }
  if (!s.after.empty()) out += "<span style='color:#6b7280;'>" + html(s.after) + "</span>";
  if (out.isEmpty()) out = "<i style='color:#9ca3af;'>(no tokens)</i>";
  return out;
}

QString side_footer(const OutputSide& s) {
  return QString("<span style='color:#6b7280; font-size:8pt;'>%1 tokens · %2</span>")
      .arg(s.tokens)
      .arg(s.finish_reason.empty() ? QString("not run") : QString::fromStdString(s.finish_reason));
}

}  // namespace

QString format_delta_value(const Delta& d, double v) { return QString::fromStdString(format_metric(v, d.unit)); }

QString format_change(const Delta& d) {
  const double change = relative_change(d.a, d.b);
  if (std::isnan(change)) return d.b == d.a ? QString("±0") : QString("—");
  return QString("%1%2 %").arg(change >= 0 ? "+" : "−").arg(std::abs(change) * 100, 0, 'f', 1);
}

QString spread_text(const Delta& d) {
  if (!d.spread_a.measured() || !d.spread_b.measured()) {
    return "Not coloured: one run per side measures no run-to-run spread, and one run's figure can move by several "
           "percent on the next. Run each side two or more times (runs per side) to tell a change from noise.";
  }
  const auto runs = [&](const char* side, const RunSpread& s) {
    if (s.exact) return QString("%1 is a dry run (the same figure every run)").arg(side);
    return QString("%1's %2 runs gave %3 to %4").arg(side).arg(s.runs).arg(format_delta_value(d, s.lo), format_delta_value(d, s.hi));
  };
  return QString("Not coloured: %1, %2; the ranges overlap, so the change is within the run-to-run spread.")
      .arg(runs("A", d.spread_a), runs("B", d.spread_b));
}

void fill_delta_table(QTableWidget& table, const std::vector<Delta>& deltas) {
  table.clear();
  table.setColumnCount(5);
  table.setHorizontalHeaderLabels({"metric", "A", "B", "B − A", "change"});
  table.setRowCount(0);
  for (const Delta& d : deltas) {
    const bool not_reported = !d.not_reported_a.empty() || !d.not_reported_b.empty();
    if (!d.available && !not_reported) continue;
    const int row = table.rowCount();
    table.insertRow(row);
    const double diff = d.b - d.a;
    QString diff_text = format_delta_value(d, std::abs(diff));
    if (diff != 0) diff_text.prepend(diff > 0 ? "+" : "−");
    const auto value = [&](double v, const std::string& server) {
      return server.empty() ? format_delta_value(d, v) : "not reported by " + QString::fromStdString(server);
    };
    const QString cells[] = {QString::fromStdString(d.metric), value(d.a, d.not_reported_a), value(d.b, d.not_reported_b),
                             not_reported ? QString("—") : diff_text, not_reported ? QString("—") : format_change(d)};
    for (int col = 0; col < 5; ++col) {
      auto* item = new QTableWidgetItem(cells[col]);
      item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
      if (col > 0) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      table.setItem(row, col, item);
    }
    // Better or worse for B: green or red; unchanged and metrics without a direction stay plain, the
    // latter saying why in their tooltip.
    const DeltaVerdict verdict = not_reported ? DeltaVerdict::Neutral : delta_verdict(d);
    if (not_reported) {
      for (int col = 0; col < 5; ++col) {
        table.item(row, col)->setForeground(QBrush(QColor("#6b7280")));
        table.item(row, col)->setToolTip("This side does not report this figure (a server's /metrics lacks it, or a dry run "
                                         "ran nothing that measures it): no number is shown rather than 0.");
      }
    } else if (!d.neutral_reason.empty()) {
      for (int col = 0; col < 5; ++col) table.item(row, col)->setToolTip(QString::fromStdString(d.neutral_reason));
    } else if (verdict == DeltaVerdict::WithinSpread) {
      for (int col = 0; col < 5; ++col) table.item(row, col)->setToolTip(spread_text(d));
    }
    if (verdict == DeltaVerdict::Better || verdict == DeltaVerdict::Worse) {
      const QColor colour = verdict == DeltaVerdict::Better ? QColor("#047857") : QColor("#b91c1c");
      for (int col = 3; col < 5; ++col) table.item(row, col)->setForeground(QBrush(colour));
    }
    // The metric's name, which a narrow table elides, leads its tooltip.
    QTableWidgetItem* metric = table.item(row, 0);
    metric->setToolTip(metric->toolTip().isEmpty() ? cells[0] : "<b>" + cells[0].toHtmlEscaped() + "</b><br>" + metric->toolTip().toHtmlEscaped());
  }
  table.horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  for (int col = 1; col < 5; ++col) table.horizontalHeader()->setSectionResizeMode(col, QHeaderView::ResizeToContents);
}

QString verdict_html(const Comparison& c) {
  if (ran_simulated(c.a) || ran_simulated(c.b)) {
    return QString("<span style='color:#92400e;'>outputs not compared: %1 was simulated (a dry run generates "
                   "placeholder tokens)</span>")
        .arg(ran_simulated(c.a) && ran_simulated(c.b) ? "each side" : ran_simulated(c.a) ? "A" : "B");
  }
  int diverging = 0;
  for (const OutputPair& p : c.outputs) diverging += p.divergence >= 0;
  const bool must_match = outputs_must_match(c.a, c.b, c.sampling);
  if (diverging == 0) {
    return QString("<span style='color:#047857;'>outputs identical%1</span>")
        .arg(must_match ? QString(", as the exact features promise") : QString());
  }
  const QString count = QString("%1 of %2 outputs diverge").arg(diverging).arg(c.outputs.size());
  if (must_match) {
    return "<span style='color:#b91c1c;'>" + count + " although only exact features differ: a bug to report</span>";
  }
  return "<span style='color:#b45309;'>" + count + "</span>";
}

QString attribution_html(const EngineConfig& a, const EngineConfig& b, bool same_device) {
  const std::vector<std::string> differing = differing_settings(a, b);
  const QString note = QString::fromStdString(attribution_note(differing, same_device)).toHtmlEscaped();
  if (note.isEmpty()) return note;
  if (differing.empty()) return "<span style='color:#4b5563;'>" + note + "</span>";
  return "<span style='color:#92400e; font-weight:bold;'>⚠ " + note + "</span>";
}

QString outputs_html(const std::vector<OutputPair>& outputs) {
  QString out = "<table width='100%' cellspacing='0' cellpadding='4' style='border-collapse:collapse;'>";
  out += "<tr><th width='50%' align='left' style='background:#eff6ff; color:#1d4ed8;'>A</th>"
         "<th width='50%' align='left' style='background:#fff7ed; color:#c2410c;'>B</th></tr>";
  // Diverging requests first (in id order), then the identical ones: what differs is what one looks for.
  std::vector<const OutputPair*> order;
  for (const OutputPair& p : outputs) order.push_back(&p);
  std::stable_partition(order.begin(), order.end(), [](const OutputPair* p) { return p->divergence >= 0; });
  for (const OutputPair* pair : order) {
    const OutputPair& p = *pair;
    const char* const colour = !p.compared ? "#6b7280" : p.divergence < 0 ? "#047857" : "#b45309";
    out += QString("<tr><td colspan='2' style='background:#f3f4f6; border-top:1px solid #d1d5db;'>"
                   "<b>request %1</b> &nbsp; <span style='color:%2; font-weight:bold;'>%3</span>%4</td></tr>")
               .arg(p.id)
               .arg(colour)
               .arg(QString::fromStdString(pair_verdict(p)))
               .arg(p.synthetic_prompt ? QString(" &nbsp; <span style='color:#6b7280;'>synthetic prompt: pseudo-random "
                                                 "token ids, so the output is no answer and its text is not shown</span>")
                                       : QString());
    // A continuation of pseudo-random ids is gibberish: only its length, end and agreement are shown.
    const auto text = [&](const OutputSide& side) {
      return p.synthetic_prompt && !side.simulated ? QString() : side_html(side) + "<br>";
    };
    out += "<tr><td valign='top' style='font-family:monospace;'>" + text(p.a) + side_footer(p.a) +
           "</td><td valign='top' style='font-family:monospace;'>" + text(p.b) + side_footer(p.b) + "</td></tr>";
  }
  return out + "</table>";
}

}  // namespace inferscope::gui
