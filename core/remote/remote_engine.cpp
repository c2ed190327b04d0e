#include "core/remote/remote_engine.h"

#include <charconv>

#include "core/common/json_field.h"
#include "core/engine/kv_snapshot_json.h"
#include "core/engine/metrics_json.h"
#include "core/remote/histogram_math.h"
#include "core/remote/http_client.h"
#include "core/remote/remote_request.h"
#include "core/remote/server_report.h"

namespace inferscope {
namespace {

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

void RemoteEngine::add_latency_percentiles(const ServerScrape& scrape, double t, StepMetrics& step) {
  for (size_t i = 0; i < kServerLatencies; ++i) {
    const std::optional<HistogramSeries>& now = scrape.latency[i];
    if (!now) continue;
    auto& history = latency_history_[i];
    history.emplace_back(t, *now);
    // The oldest scrape kept is the last one at least a window old: the increase spans the window.
    while (history.size() > 2 && history[1].first <= t - options_.latency_window_s) history.pop_front();
    if (history.size() < 2) continue;
    try {
      const HistogramSeries window = histogram_increase(history.front().second, *now);
      if (window.count <= 0) continue;
      step.server_latency[i] = {histogram_quantile(0.5, window), histogram_quantile(0.99, window)};
    } catch (const std::invalid_argument&) {  // the server changed its bucket bounds (a restart): start again
      history.erase(history.begin(), history.end() - 1);
    }
  }
}

std::vector<ServerSlot> RemoteEngine::slot_states() const {
  std::lock_guard lock(mu_);
  return slots_;
}

std::optional<ServerKvPool> RemoteEngine::kv_pool() const {
  std::lock_guard lock(mu_);
  return kv_pool_;
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
  while (!stopping_) {
    lock.unlock();
    if (follows_engine()) {
      follow_engine();
    } else {
      scrape_metrics();
    }
    lock.lock();
    stop_poll_.wait_for(lock, std::chrono::duration<double>(options_.metrics_interval_s), [this] { return stopping_; });
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
  std::optional<EngineMetricsSnapshot> answer;
  std::string error;
  try {
    const std::string where = endpoint_url(endpoint_, path);
    answer = metrics_from_json(parse_json_text(get(path), where), where);
  } catch (const std::exception& e) {
    error = e.what();
  }
  std::lock_guard lock(mu_);
  metrics_error_ = error;
  if (answer) follower_.take(std::move(*answer));
}

void RemoteEngine::scrape_metrics() {
  std::optional<ServerScrape> scrape;
  std::string error;
  try {
    scrape = read_server_scrape(MetricSnapshot::parse(get("/metrics")), server_.kind);
  } catch (const std::exception& e) {
    error = e.what();
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
  metrics_error_ = error;
  slots_ = std::move(slots);
  if (scrape) take_scrape(*scrape, t);
}

void RemoteEngine::take_scrape(const ServerScrape& scrape, double t) {
  const ServerCounters& counters = scrape.counters;
  const ServerGauges& gauges = scrape.gauges;
  if (latest_counters_) {
    // The interval since the last scrape, as one dashboard step.
    StepMetrics step = server_step(gauges, counters_increase(*latest_counters_, counters), t, t - last_scrape_s_);
    add_latency_percentiles(scrape, t, step);
    metrics_.on_step(step);
  } else {
    baseline_ = counters;
  }
  metrics_.set_queue(whole_count<int32_t>(gauges.requests_running.value_or(0)), whole_count<int32_t>(gauges.requests_waiting.value_or(0)));
  latest_counters_ = counters;
  latest_gauges_ = gauges;
  kv_pool_ = scrape.kv_pool;
  last_scrape_s_ = t;
}

EngineMetricsSnapshot RemoteEngine::metrics_snapshot() const {
  if (follows_engine()) {
    std::lock_guard lock(mu_);
    EngineMetricsSnapshot s = follower_.snapshot();
    s.source = source();
    return s;
  }
  EngineMetricsSnapshot s = metrics_.snapshot(now());
  s.source = source();
  std::lock_guard lock(mu_);
  s.not_reported = server_not_reported(latest_gauges_.value_or(ServerGauges{}), latest_counters_.value_or(ServerCounters{}));
  if (latest_gauges_ && latest_gauges_->spec_accept_rate) s.spec_mode = "server";
  // Totals since connecting, as the server counts them where it does.
  if (baseline_ && latest_counters_) add_server_totals(s, counters_increase(*baseline_, *latest_counters_));
  s.weights_quant = "server";
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
