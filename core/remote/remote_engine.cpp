#include "core/remote/remote_engine.h"

#include <algorithm>
#include <charconv>

#include "core/common/json_field.h"
#include "core/engine/kv_snapshot_json.h"
#include "core/engine/metrics_json.h"
#include "core/remote/http_client.h"
#include "core/remote/remote_request.h"
#include "core/remote/server_report.h"

namespace inferscope {
namespace {

// After this many failed polls in a row the wait between polls stops doubling.
constexpr int kMaxBackoffDoublings = 5;

// The shortest decimal that reads back as `v`, whatever the locale (the workbench's may write 1,5).
std::string shortest_decimal(double v) {
  char buf[32];
  const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  return std::string(buf, end);
}

}  // namespace

RemoteEngine::RemoteEngine(RemoteEndpoint endpoint, ServerInfo server, EngineCallbacks callbacks, RemoteEngineOptions options)
    : endpoint_(std::move(endpoint)),
      server_(std::move(server)),
      callbacks_(std::move(callbacks)),
      options_(options),
      start_(std::chrono::steady_clock::now()),
      scrapes_(options.latency_window_s),
      poller_([this] { poll_metrics(); }) {}

RemoteEngine::~RemoteEngine() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    for (auto& [id, stream] : streams_) stream->cancel = true;
  }
  stop_poll_.notify_all();
  poller_.join();
  // Each stream sees its cancel within 100 ms and ends through the callbacks.
  for (auto& [id, stream] : streams_) stream->thread.join();
}

double RemoteEngine::now() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

std::string RemoteEngine::source() const { return server_address(endpoint_, server_); }

std::vector<ServerSlot> RemoteEngine::slot_states() const {
  std::lock_guard lock(mu_);
  return slots_;
}

std::optional<ServerKvPool> RemoteEngine::kv_pool() const {
  std::lock_guard lock(mu_);
  return scrapes_.kv_pool();
}

RequestId RemoteEngine::submit(EngineRequest request) {
  std::lock_guard lock(mu_);
  join_finished();
  const RequestId id = next_id_++;
  metrics_.on_arrival(id, now(), static_cast<int32_t>(request.prompt_tokens.size()));
  auto stream = std::make_unique<Stream>();
  Stream& s = *stream;
  streams_.emplace(id, std::move(stream));
  s.thread = std::thread([this, id, &s, r = std::move(request)]() mutable { run_request(id, std::move(r), s); });
  return id;
}

void RemoteEngine::cancel(RequestId id) {
  std::lock_guard lock(mu_);
  if (const auto it = streams_.find(id); it != streams_.end()) it->second->cancel = true;
}

void RemoteEngine::join_finished() {
  for (RequestId id : finished_) {
    const auto it = streams_.find(id);
    it->second->thread.join();
    streams_.erase(it);
  }
  finished_.clear();
}

void RemoteEngine::run_request(RequestId id, EngineRequest request, Stream& stream) {
  const int32_t max_tokens = request.max_tokens > 0 ? request.max_tokens : -1;
  nlohmann::json body;
  std::string path = "/v1/completions";
  if (!request.messages.empty()) {
    path = "/v1/chat/completions";
    body = chat_request_body(endpoint_, server_.kind, request.messages, request.sampling, max_tokens);
  } else if (!request.prompt_tokens.empty()) {
    body = completion_request_body(endpoint_, server_.kind, request.prompt_tokens, request.sampling, max_tokens);
  } else {
    body = completion_request_body(endpoint_, server_.kind, request.prompt, request.sampling, max_tokens);
  }
  // Chunk times on the engine's clock: the stream's own clock starts when it is sent.
  const double sent = now();
  double last = sent;
  RemoteStreamCallbacks chunks;
  chunks.on_content = [&](std::string_view text, double since_sent) {
    const double t = sent + since_sent;
    metrics_.on_token(id, t);
    if (callbacks_.on_token) callbacks_.on_token(id, text, kRemoteChunk, TokenTiming{t, since_sent, t - last});
    last = t;
  };
  chunks.on_reasoning = [&](std::string_view text, double) {
    if (callbacks_.on_reasoning) callbacks_.on_reasoning(id, text);
  };
  const RemoteReply reply = stream_completion(endpoint_, path, body, chunks, &stream.cancel, options_.timeouts);
  if (reply.usage) {
    const auto prompt = static_cast<int32_t>(reply.usage->prompt_tokens);
    const auto generated = static_cast<int32_t>(reply.usage->completion_tokens);
    metrics_.on_usage(id, prompt, generated);
    if (callbacks_.on_usage) callbacks_.on_usage(id, prompt, generated);
  }
  if (reply.timings && callbacks_.on_server_timings) callbacks_.on_server_timings(id, *reply.timings);
  const StopReason reason = stop_reason_of(reply);
  metrics_.on_finished(id, now(), stop_reason_name(reason), 0);
  if (reason == StopReason::Failed && callbacks_.on_error) callbacks_.on_error(id, reply.error);
  if (callbacks_.on_finished) callbacks_.on_finished(id, reason);
  std::lock_guard lock(mu_);
  finished_.push_back(id);
}

std::string RemoteEngine::get(const std::string& path) const {
  HttpRequest request;
  request.url = endpoint_url(endpoint_, path);
  request.headers = endpoint_headers(endpoint_);
  request.total_timeout_s = std::max(1.0, 4 * options_.metrics_interval_s);
  return http_perform(request).body;
}

void RemoteEngine::poll_metrics() {
  std::unique_lock lock(mu_);
  int failures = 0;  // in a row
  while (!stopping_) {
    lock.unlock();
    std::string error;
    try {
      if (follows_engine()) {
        follow_engine();
      } else {
        scrape_metrics();
      }
    } catch (const std::exception& e) {  // whatever it is, the poller goes on
      error = e.what();
    }
    // A server that keeps failing is asked less often: the interval, doubled per failure in a row.
    failures = error.empty() ? 0 : failures + 1;
    const double wait_s = options_.metrics_interval_s * (1 << std::min(failures, kMaxBackoffDoublings));
    lock.lock();
    poll_error_ = error.empty() ? error : error + " (asking again every " + shortest_decimal(wait_s) + " s)";
    stop_poll_.wait_for(lock, std::chrono::duration<double>(wait_s), [this] { return stopping_; });
  }
}

void RemoteEngine::follow_engine() {
  std::optional<double> after;
  {
    std::lock_guard lock(mu_);
    after = follower_.after_s();
  }
  // Only what came after the last step seen.
  const std::string path = std::string(kEngineMetricsPath) + (after ? "?after_s=" + shortest_decimal(*after) : "");
  const std::string where = endpoint_url(endpoint_, path);
  EngineMetricsSnapshot answer = metrics_from_json(parse_json_text(get(path), where), where);
  std::lock_guard lock(mu_);
  follower_.take(std::move(answer));
}

void RemoteEngine::scrape_metrics() {
  const std::string text = get("/metrics");  // an HttpError names the URL
  ServerScrape scrape;
  try {
    scrape = read_server_scrape(MetricSnapshot::parse(text), server_.kind);
  } catch (const std::exception& e) {  // the text, or a metric of it, is not what the mapping reads
    throw std::runtime_error(endpoint_url(endpoint_, "/metrics") + ": " + e.what());
  }
  // llama-server's slots: how much of each slot's context its request fills (none when disabled).
  std::vector<ServerSlot> slots;
  if (server_.kind == ServerKind::LlamaCpp) {
    try {
      slots = read_slots(get("/slots"));
    } catch (const std::exception&) {  // --no-slots, or an older server: the panel shows usage only
    }
  }
  const double t = now();
  std::lock_guard lock(mu_);
  slots_ = std::move(slots);
  scrapes_.take(scrape, t, metrics_);
}

EngineMetricsSnapshot RemoteEngine::metrics_snapshot() const {
  if (follows_engine()) {
    std::lock_guard lock(mu_);
    EngineMetricsSnapshot s = follower_.snapshot();
    s.source = source();
    s.source_error = poll_error_;
    return s;
  }
  EngineMetricsSnapshot s = metrics_.snapshot(now());
  s.source = source();
  std::lock_guard lock(mu_);
  scrapes_.complete(s);
  s.source_error = poll_error_;
  return s;
}

std::optional<KvSnapshot> RemoteEngine::kv_snapshot() {
  if (!follows_engine()) return std::nullopt;
  const std::string where = endpoint_url(endpoint_, kEngineKvPath);
  try {
    return kv_snapshot_from_json(parse_json_text(get(kEngineKvPath), where), where);
  } catch (const std::exception&) {  // the block view keeps the last table; the metrics poll says what failed
    return std::nullopt;
  }
}

}  // namespace inferscope
