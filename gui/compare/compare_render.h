// How the comparison's results read: the delta table's cells (values in their units, B against A
// with the change coloured better/worse where the metric has a direction) and both outputs of each request side by side, the first
// divergent token marked.
#pragma once
#include <QString>
#include <vector>

#include "gui/compare/comparison.h"

class QTableWidget;

namespace inferscope::gui {

// "123.4 tok/s", "0.081 s", "41.2 %", "3", "93.0 MiB", "2.41" (tokens).
QString format_delta_value(const Delta& delta, double value);
// "+12.5 %", "−3.0 %", "—" (no relative change when A is 0 or both are equal at 0).
QString format_change(const Delta& delta);
// Why a change is within the spread (DeltaVerdict::WithinSpread): both sides' ranges of runs in the
// figure's unit, or that one run per side measures none.
QString spread_text(const Delta& delta);
// Rows metric | A | B | B − A | change; the change is green when B is better, red when worse
// (delta_verdict), plain where the metric has no direction, with the reason as the row's tooltip; a
// figure a side does not report reads "not reported by <server>" (or "by a dry run") there, greyed, with no change.
void fill_delta_table(QTableWidget& table, const std::vector<Delta>& deltas);
// The headline's verdict: "outputs identical" (and that exact features promise it), or how many
// outputs diverge, flagged as a bug when only exact features differ; "outputs not compared" when a
// side was simulated.
QString verdict_html(const Comparison& comparison);
// attribution_note of A and B as rich text: amber when several settings differ (or any beside a
// different device), grey when none do; "" when exactly one does on the same device.
QString attribution_html(const EngineConfig& a, const EngineConfig& b, bool same_device = true);
// One block per request, diverging ones first: its verdict ("identical" / "diverges at token N" or
// "character N" / "not compared" beside a simulated side) and A's and B's text in
// two columns, the shared part plain, the first divergent token highlighted, the rest dimmed; for a
// synthetic prompt only each side's token count and finish, its continuation being no answer.
QString outputs_html(const std::vector<OutputPair>& outputs);

}  // namespace inferscope::gui
