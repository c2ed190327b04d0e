// What a remote server's /metrics lacks, said on the dashboard: a line of a step metric it does not
// report stays empty, and a panel it does not fill (named, or every line of it) shows the note
// "SOURCE:\nthis server does not report\nPHRASE" instead of drawing zeros
// (EngineMetricsSnapshot::not_reported names the step metrics and the panels).
#pragma once
#include <QString>
#include <string_view>

#include "core/engine/engine_metrics.h"

namespace inferscope::gui {

// What panel `panel` (a dashboard plot's objectName) shows, as "does not report ..." ends: "KV usage".
// Throws std::invalid_argument naming `panel` when no dashboard panel has that name.
QString reported_quantity(std::string_view panel);

// Throws std::invalid_argument naming the first entry of `s.not_reported` that is neither a dashboard
// panel nor a step metric the dashboard draws as a line.
void check_not_reported(const EngineMetricsSnapshot& s);

// Whether `s` does not report the step metric `key` (its line stays empty).
bool line_not_reported(const EngineMetricsSnapshot& s, std::string_view key);

// The note of `panel` when `s.not_reported` lists it, or every step metric drawn on it as a line when
// it draws nothing else ("llama.cpp at http://h:8080:\nthis server does not report\nKV usage"; with no
// source, a dry run's: "a dry run does not measure\nattention scratch or time"), else "".
QString not_reported_note(const EngineMetricsSnapshot& s, std::string_view panel);

}  // namespace inferscope::gui
