#include "core/remote/remote_engine.h"

#include "core/remote/http_client.h"
#include "core/remote/remote_request.h"

namespace inferscope {
namespace {

StopReason stop_reason_of(const RemoteReply& reply) {
  if (reply.outcome == RemoteOutcome::Cancelled) return StopReason::Aborted;
  if (reply.outcome == RemoteOutcome::Failed) return StopReason::Failed;
  return reply.finish_reason == "length" ? StopReason::Length : StopReason::EndOfGeneration;
}

std::optional<double> difference(const std::optional<double>& later, const std::optional<double>& earlier) {
  if (!later || !earlier) return std::nullopt;
  return *later - *earlier;
}

int32_t count(const std::optional<double>& v) { return v ? static_cast<int32_t>(*v) : 0; }

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

std::string RemoteEngine::source() const { return std::string(server_kind_name(server_.kind)) + " at " + endpoint_.base_url; }

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
  const RemoteReply reply = stream_completion(endpoint_, path, body, chunks, &stream.cancel, options_.timeouts);
  if (reply.usage) {
    const auto prompt = static_cast<int32_t>(reply.usage->prompt_tokens);
    const auto generated = static_cast<int32_t>(reply.usage->completion_tokens);
    metrics_.on_usage(id, prompt, generated);
    if (callbacks_.on_usage) callbacks_.on_usage(id, prompt, generated);
  }
  const StopReason reason = stop_reason_of(reply);
  metrics_.on_finished(id, now(), stop_reason_name(reason), 0);
  if (reason == StopReason::Failed && callbacks_.on_error) callbacks_.on_error(id, reply.error);
  if (callbacks_.on_finished) callbacks_.on_finished(id, reason);
  std::lock_guard lock(mu_);
  finished_.push_back(id);
}

void RemoteEngine::poll_metrics() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    HttpRequest request;
    request.url = endpoint_url(endpoint_, "/metrics");
    request.headers = endpoint_headers(endpoint_);
    request.total_timeout_s = std::max(1.0, 4 * options_.metrics_interval_s);
    std::optional<MetricSnapshot> scrape;
    std::string error;
    try {
      scrape = MetricSnapshot::parse(http_perform(request).body);
    } catch (const std::exception& e) {
      error = e.what();
    }
    const double t = now();
    lock.lock();
    metrics_error_ = error;
    if (scrape) take_scrape(*scrape, t);
    stop_poll_.wait_for(lock, std::chrono::duration<double>(options_.metrics_interval_s), [this] { return stopping_; });
  }
}

void RemoteEngine::take_scrape(const MetricSnapshot& scrape, double t) {
  const ServerCounters counters = read_counters(scrape, server_.kind);
  const ServerGauges gauges = read_gauges(scrape, server_.kind);
  if (latest_counters_) {
    // The interval since the last scrape, as one dashboard step.
    const ServerCounters d = counters_increase(*latest_counters_, counters);
    StepMetrics step;
    step.time_s = t;
    step.duration_s = t - last_scrape_s_;
    step.num_requests_running = count(gauges.requests_running);
    step.num_requests_waiting = count(gauges.requests_waiting);
    step.prefill_tokens = count(d.prompt_tokens);
    step.decode_tokens = count(d.generation_tokens);
    step.kv_cache_usage_perc = gauges.kv_cache_usage.value_or(0);
    step.prefix_cache_queries = count(d.prefix_cache_queries);
    step.prefix_cache_hits = count(d.prefix_cache_hits);
    step.spec_draft_tokens = count(d.spec_draft_tokens);
    step.spec_accepted_tokens = count(d.spec_accepted_tokens);
    metrics_.on_step(step, KvStats{});
  } else {
    baseline_ = counters;
  }
  metrics_.set_queue(count(gauges.requests_running), count(gauges.requests_waiting));
  latest_counters_ = counters;
  latest_gauges_ = gauges;
  last_scrape_s_ = t;
}

EngineMetricsSnapshot RemoteEngine::metrics_snapshot() const {
  EngineMetricsSnapshot s = metrics_.snapshot(now());
  s.source = source();
  std::lock_guard lock(mu_);
  // Panels no server fills: per-step tokens and time, attention, the roofline, KV waste.
  s.not_reported = {"tokens_per_step", "attention", "roofline", "kv_waste"};
  const ServerCounters none;
  const ServerCounters& c = latest_counters_ ? *latest_counters_ : none;
  const ServerCounters& b = baseline_ ? *baseline_ : none;
  if (!latest_gauges_ || !latest_gauges_->kv_cache_usage) s.not_reported.push_back("kv_usage");
  if (!c.generation_tokens) s.not_reported.push_back("decode_tokens_per_second");
  if (!c.prefix_cache_queries) s.not_reported.push_back("prefix_cache_hit_rate");
  if (!c.spec_drafts) {
    s.not_reported.push_back("spec_acceptance");
    s.not_reported.push_back("spec_decode");
  }
  // Totals since connecting, as the server counts them where it does.
  if (const auto v = difference(c.prompt_tokens, b.prompt_tokens)) s.prompt_tokens_total = static_cast<int64_t>(*v);
  if (const auto v = difference(c.generation_tokens, b.generation_tokens)) s.generation_tokens_total = static_cast<int64_t>(*v);
  if (const auto v = difference(c.steps, b.steps)) s.num_steps = static_cast<int64_t>(*v);
  if (const auto v = difference(c.preemptions, b.preemptions)) s.num_preemptions = static_cast<int64_t>(*v);
  if (const auto v = difference(c.prefix_cache_queries, b.prefix_cache_queries)) s.kv.prefix_cache_queries = s.prefix_cache_queries = static_cast<int64_t>(*v);
  if (const auto v = difference(c.prefix_cache_hits, b.prefix_cache_hits)) s.kv.prefix_cache_hits = s.prefix_cache_hits = static_cast<int64_t>(*v);
  if (const auto drafts = difference(c.spec_drafts, b.spec_drafts)) {
    s.spec.num_drafts = static_cast<int64_t>(*drafts);
    s.spec.num_draft_tokens = static_cast<int64_t>(difference(c.spec_draft_tokens, b.spec_draft_tokens).value_or(0));
    s.spec.num_accepted_tokens = static_cast<int64_t>(difference(c.spec_accepted_tokens, b.spec_accepted_tokens).value_or(0));
    if (s.spec.num_drafts > 0) s.spec_mode = "server";
  }
  s.weights_quant = "server";
  return s;
}

}  // namespace inferscope
