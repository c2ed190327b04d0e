// What a remote server's /metrics lacks, said on the dashboard panel that would show it: each panel's
// quantity as a short phrase, and the note "SOURCE:\nthis server does not report\nPHRASE" that the
// panel shows instead of drawing zeros (EngineMetricsSnapshot::not_reported names the panels).
#pragma once
#include <QString>
#include <string_view>

#include "core/engine/engine_metrics.h"

namespace inferscope::gui {

// What panel `panel` (a dashboard plot's objectName) shows, as "does not report ..." ends: "KV usage".
// Throws std::invalid_argument naming `panel` when no dashboard panel has that name.
QString reported_quantity(std::string_view panel);

// Throws std::invalid_argument naming the first entry of `s.not_reported` that is no dashboard panel.
void check_not_reported(const EngineMetricsSnapshot& s);

// The note of `panel` when `s.not_reported` lists it ("llama.cpp at http://h:8080:\nthis server does
// not report\nKV usage"; with no source, a dry run's: "a dry run does not measure\nattention scratch
// or time"), else "".
QString not_reported_note(const EngineMetricsSnapshot& s, std::string_view panel);

}  // namespace inferscope::gui
