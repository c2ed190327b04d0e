#include "core/remote/remote_completion.h"

#include <chrono>

#include "core/remote/http_client.h"

namespace inferscope {
namespace {

using Clock = std::chrono::steady_clock;

// Folds decoded events into the reply; returns false once the stream must stop (a server error or a
// protocol error).
class ReplyBuilder {
 public:
  ReplyBuilder(RemoteReply& reply, const RemoteStreamCallbacks& callbacks, Clock::time_point sent, std::string where)
      : reply_(reply), callbacks_(callbacks), sent_(sent), where_(std::move(where)) {}

  bool apply(const std::vector<ChatEvent>& events) {
    for (const ChatEvent& event : events) {
      if (!std::visit([this](const auto& e) { return on(e); }, event)) return false;
    }
    return true;
  }

 private:
  double now() const { return std::chrono::duration<double>(Clock::now() - sent_).count(); }

  // A content or reasoning chunk: the client's clock starts TTFT and the gaps.
  double stamp() {
    const double t = now();
    if (reply_.timing.time_to_first_token_s < 0) {
      reply_.timing.time_to_first_token_s = t;
    } else {
      reply_.timing.chunk_gaps_s.push_back(t - last_chunk_s_);
    }
    last_chunk_s_ = t;
    return t;
  }
  bool on(const ContentDelta& d) {
    const double t = stamp();
    reply_.text += d.text;
    if (callbacks_.on_content) callbacks_.on_content(d.text, t);
    return true;
  }
  bool on(const ReasoningDelta& d) {
    const double t = stamp();
    reply_.reasoning += d.text;
    if (callbacks_.on_reasoning) callbacks_.on_reasoning(d.text, t);
    return true;
  }
  bool on(const FinishReason& f) {
    reply_.finish_reason = f.reason;
    return true;
  }
  bool on(const UsageReport& u) {
    reply_.usage = u;
    return true;
  }
  bool on(const ServerTimings& t) {
    reply_.timings = t;
    return true;
  }
  bool on(const ServerError& e) {
    reply_.outcome = RemoteOutcome::Failed;
    reply_.error = where_ + "the server reported an error: " + e.message + (e.code.empty() ? "" : " (code " + e.code + ")");
    return false;
  }
  bool on(const ProtocolError& e) {
    reply_.outcome = RemoteOutcome::Failed;
    reply_.error = where_ + "malformed stream: " + e.message;
    return false;
  }
  bool on(const StreamDone&) { return true; }

  RemoteReply& reply_;
  const RemoteStreamCallbacks& callbacks_;
  Clock::time_point sent_;
  std::string where_;  // "POST URL: ", the start of every error message
  double last_chunk_s_ = 0;
};

}  // namespace

RemoteReply stream_completion(const RemoteEndpoint& endpoint, std::string_view path, const nlohmann::json& body,
                              const RemoteStreamCallbacks& callbacks, const std::atomic<bool>* cancel,
                              const RemoteTimeouts& timeouts) {
  RemoteReply reply;
  HttpRequest request;
  request.url = endpoint_url(endpoint, path);
  request.post = true;
  request.body = body.dump();
  request.headers = endpoint_headers(endpoint);
  request.headers.push_back("Accept: text/event-stream");
  request.connect_timeout_s = timeouts.connect_s;
  request.idle_timeout_s = timeouts.idle_s;

  const Clock::time_point sent = Clock::now();
  ReplyBuilder builder(reply, callbacks, sent, "POST " + request.url + ": ");
  ChatStreamDecoder decoder;
  try {
    http_perform(request, [&](std::string_view chunk) { return builder.apply(decoder.feed(chunk)); }, cancel);
    builder.apply(decoder.finish());
  } catch (const HttpError& e) {
    // The sink said stop: the builder has already recorded why.
    if (reply.outcome != RemoteOutcome::Failed) {
      reply.outcome = e.failure() == HttpFailure::Cancelled ? RemoteOutcome::Cancelled : RemoteOutcome::Failed;
      if (reply.outcome == RemoteOutcome::Failed) reply.error = e.what();
    }
  }
  reply.timing.e2e_s = std::chrono::duration<double>(Clock::now() - sent).count();
  return reply;
}

}  // namespace inferscope
