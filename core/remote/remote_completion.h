// One streamed completion request to a server, end to end: POST, SSE decoding, the reply assembled,
// and the client's own clock on it (TTFT, gaps between chunks, end to end). Token counts come from
// the server's usage and timings, never from counting chunks (a chunk may carry several tokens).
#pragma once
#include <atomic>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/remote/chat_stream.h"
#include "core/remote/remote_endpoint.h"

namespace inferscope {

// Seconds since the request was sent, on the client's steady clock.
struct ClientTiming {
  double time_to_first_token_s = -1;  // first content or reasoning chunk; -1 when none arrived
  double e2e_s = 0;                   // until the stream ended (or failed, or was cancelled)
  std::vector<double> chunk_gaps_s;   // between consecutive content/reasoning chunks
};

enum class RemoteOutcome { Finished, Cancelled, Failed };

struct RemoteReply {
  RemoteOutcome outcome = RemoteOutcome::Finished;
  std::string error;          // Failed: what went wrong, naming the URL (the text so far is kept)
  std::string text;           // content, as streamed
  std::string reasoning;      // reasoning_content / reasoning, kept apart
  std::string finish_reason;  // "stop", "length", ... ("" when none came)
  std::optional<UsageReport> usage;
  std::optional<ServerTimings> timings;
  ClientTiming timing;
};

struct RemoteStreamCallbacks {
  std::function<void(std::string_view text, double since_sent_s)> on_content;
  std::function<void(std::string_view text, double since_sent_s)> on_reasoning;
};

struct RemoteTimeouts {
  double connect_s = 5;
  double idle_s = 120;  // no byte for this long: the server is stuck (a long prefill sends none)
};

// POSTs `body` (stream: true) to endpoint + path and follows the stream to its end. Never throws for
// what the server or network does: failures (HTTP status, connection, timeout, a server error in the
// stream, a malformed or cut stream) come back as Failed with the text so far; `cancel` turning true
// closes the connection (the server aborts the request) and returns Cancelled.
RemoteReply stream_completion(const RemoteEndpoint& endpoint, std::string_view path, const nlohmann::json& body,
                              const RemoteStreamCallbacks& callbacks = {}, const std::atomic<bool>* cancel = nullptr,
                              const RemoteTimeouts& timeouts = {});

}  // namespace inferscope
