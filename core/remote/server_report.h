// How a server's own figures map onto the engine's metrics, shared by the live RemoteEngine and a
// finished remote workload run: where the numbers come from, a dashboard step from a scrape, the
// totals from a counters' increase, the panels the server cannot fill, and a reply's stop reason.
#pragma once
#include <limits>
#include <string>
#include <vector>

#include "core/engine/engine_metrics.h"
#include "core/remote/remote_completion.h"
#include "core/remote/server_metrics.h"
#include "core/remote/server_probe.h"
#include "core/sched/request.h"

namespace inferscope {

// A count the server reported (Prometheus values are doubles) as an Int: NaN and negatives count 0 and
// values beyond Int its largest (a plain cast of those is undefined behaviour).
template <typename Int>
Int whole_count(double v) {
  if (!(v > 0)) return 0;
  if (v >= static_cast<double>(std::numeric_limits<Int>::max())) return std::numeric_limits<Int>::max();
  return static_cast<Int>(v);
}

// "llama.cpp at http://127.0.0.1:8080": the server, short enough for a panel's note.
std::string server_address(const RemoteEndpoint& endpoint, const ServerInfo& server);
// server_address and " (model)"; without it when the endpoint names none.
std::string remote_source(const RemoteEndpoint& endpoint, const ServerInfo& server);

// One dashboard step ending at `time_s`, lasting `duration_s`: the queue and KV usage from `gauges`,
// the tokens, prefix-cache and speculative counts from `increase` (absent figures count 0).
StepMetrics server_step(const ServerGauges& gauges, const ServerCounters& increase, double time_s, double duration_s);

// Sets the snapshot's totals (tokens, steps, preemptions, prefix cache, speculation) to `increase`
// where the server reports them; the others stay as they are.
void add_server_totals(EngineMetricsSnapshot& snapshot, const ServerCounters& increase);

// The dashboard panels (EngineMetricsSnapshot::not_reported) a server cannot fill: those no server
// fills, and those whose figures both its counters and its gauges (the fields set in `gauges`) lack.
std::vector<std::string> server_not_reported(const ServerGauges& gauges, const ServerCounters& counters);
// Whether the server shows that it speculates: drafts counted (a counter at 0 is a server with no
// drafter), or an acceptance rate or accepted length published (SGLang before 0.5.4 has only the latter).
bool server_speculates(const ServerGauges& gauges, const ServerCounters& counters);

// Cancelled: Aborted; Failed: Failed; else Length when the server says "length", EndOfGeneration otherwise.
StopReason stop_reason_of(const RemoteReply& reply);

}  // namespace inferscope
