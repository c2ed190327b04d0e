// One check of a server, as the connect dialog shows it: probe_server's findings in one line
// ("llama.cpp · 4 slots · context 512 · model X"), or what went wrong in words a user can act on
// (bad answer, nothing listening, no answer in time, an HTTP error with the server's message, TLS).
#pragma once
#include <QString>
#include <atomic>
#include <optional>

#include "core/remote/remote_endpoint.h"
#include "core/remote/server_probe.h"

namespace inferscope::gui {

struct ProbeReport {
  RemoteEndpoint endpoint;         // what was checked
  std::optional<ServerInfo> info;  // what the server said, when it answered
  QString error;                   // otherwise: what went wrong, then the client's own message
};

// Runs probe_server(endpoint, timeout_s, cancel) and words the outcome; never throws. Blocks up to a
// few times timeout_s: call it off the GUI thread (ServerProber does).
ProbeReport probe_report(const RemoteEndpoint& endpoint, double timeout_s, const std::atomic<bool>* cancel = nullptr);

// "llama.cpp · 4 slots · context 512 · model X" (or "N models"); the kind "unknown" says the API
// answered but not which server it is.
QString server_summary(const ServerInfo& info);
// "Its /metrics names fit vLLM 0.9.2 to 0.11.0. Not published: live generation throughput, ...", or ""
// when /metrics did not answer.
QString metrics_summary(const ServerInfo& info);

}  // namespace inferscope::gui
