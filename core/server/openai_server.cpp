#include "core/server/openai_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <charconv>
#include <ctime>
#include <nlohmann/json.hpp>
#include <mutex>
#include <random>
#include <thread>

#include "core/engine/kv_snapshot_json.h"
#include "core/engine/metrics_json.h"
#include "core/engine/prompt.h"
#include "core/sample/logprobs.h"
#include "core/server/openai_request.h"
#include "core/server/openai_response.h"
#include "core/server/prometheus_exposition.h"
#include "core/server/sse_writer.h"

namespace inferscope {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kPoll{100};  // how often a waiting handler looks at the drain deadline
constexpr int kListenBacklog = 1024;  // connections waiting to be accepted (the kernel caps it at somaxconn)

// Compares without an early exit, so the time taken does not tell how much of a guessed key matched.
bool same_key(const std::string& given, const std::string& key) {
  unsigned char diff = given.size() == key.size() ? 0 : 1;
  for (size_t i = 0; i < std::max(given.size(), key.size()); ++i) {
    const auto a = static_cast<unsigned char>(i < given.size() ? given[i] : 0);
    const auto b = static_cast<unsigned char>(i < key.size() ? key[i] : 0);
    diff = static_cast<unsigned char>(diff | (a ^ b));
  }
  return diff == 0;
}

void reuse_address(socket_t sock) {
  const int yes = 1;
  ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
}

void send_error(httplib::Response& res, const ApiError& e) {
  res.status = e.status();
  res.set_content(e.json().dump(), "application/json");
}

// The streamed token's log-probability and its `top` most likely alternatives, as text.
AnswerLogprob logprob_of(const Tokenizer& tokenizer, const StreamedToken& t, int32_t top) {
  AnswerLogprob out{tokenizer.token_to_piece(t.token), *t.logprob, {}};
  for (size_t k = 0; k < std::min(t.top.size(), static_cast<size_t>(top)); ++k) {
    out.top.emplace_back(tokenizer.token_to_piece(t.top[k].id), t.top[k].logprob);
  }
  return out;
}

}  // namespace

struct OpenAiServer::Impl {
  const LlamaModel& model;
  InferenceEngine& engine;
  RequestStreams& streams;
  ServeOptions options;
  httplib::Server http;
  int32_t port = 0;
  std::string id_prefix;
  std::atomic<uint64_t> serial{0};
  std::mutex serving_mu;                      // orders serve()'s start against stop()
  bool serving = false;                       // serve() has begun listening (under serving_mu)
  std::atomic<bool> listening_ended{false};
  std::atomic<bool> draining{false};
  std::atomic<int64_t> drain_deadline_ns{0};  // steady clock
  std::atomic<int64_t> in_flight{0};          // requests submitted whose answers are not done
  std::mutex queue_mu;  // guards running
  int64_t running = 0;  // the engine's running count when last asked

  // Holds one request's place in in_flight while its answer lives.
  struct InFlight {
    std::atomic<int64_t>& count;
    explicit InFlight(std::atomic<int64_t>& c) : count(c) { ++count; }
    ~InFlight() { --count; }
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;
  };

  // Whether max_queue requests already wait for the engine: those in flight beyond the ones it runs.
  // The running count is asked again (a metrics snapshot) only when the last one says full, so a
  // request pays for it only near the limit, and a refusal always rests on a fresh count.
  bool queue_full() {
    if (options.max_queue <= 0) return false;
    std::lock_guard lock(queue_mu);
    if (in_flight - running < options.max_queue) return false;
    running = engine.metrics_snapshot().num_requests_running;
    return in_flight - running >= options.max_queue;
  }

  // What one answer has gathered so far.
  struct Answer {
    AnswerHeader header;
    RequestId id = 0;
    int32_t prompt_tokens = 0;
    int32_t completion_tokens = 0;
    int32_t top_logprobs = -1;
    std::string text;
    std::optional<StopReason> finished;
    std::string error;
    std::unique_ptr<InFlight> place;
  };

  Impl(const LlamaModel& m, InferenceEngine& e, RequestStreams& s, ServeOptions o)
      : model(m), engine(e), streams(s), options(std::move(o)) {
    if (options.model_name.empty()) options.model_name = model.config().name;
    std::random_device random;
    id_prefix = std::to_string(random() % 1000000000u) + "-";
  }

  bool past_drain_deadline() const {
    return draining && Clock::now().time_since_epoch().count() >= drain_deadline_ns.load();
  }

  // The request's events until it has tokens or has ended; cancels it once the drain deadline has
  // passed, whether or not tokens still come (its end follows within an engine step).
  StreamEvents next_events(RequestId id) {
    for (;;) {
      if (past_drain_deadline()) engine.cancel(id);
      StreamEvents events = streams.take(id, kPoll);
      if (!events.tokens.empty() || events.finished) return events;
    }
  }

  // Adds `events` to `a`; returns the text and logprobs they add.
  std::pair<std::string, std::vector<AnswerLogprob>> add(Answer& a, StreamEvents& events) {
    std::string text;
    std::vector<AnswerLogprob> logprobs;
    for (StreamedToken& t : events.tokens) {
      text += t.piece;
      if (t.token < 0) continue;
      ++a.completion_tokens;
      if (a.top_logprobs >= 0 && t.logprob) logprobs.push_back(logprob_of(model.tokenizer(), t, a.top_logprobs));
    }
    a.text += text;
    if (events.finished) a.finished = events.finished;
    if (!events.error.empty()) a.error = events.error;
    return {std::move(text), std::move(logprobs)};
  }

  // Renders and tokenizes the prompt here, off the engine thread, and refuses one with no room to generate.
  std::vector<TokenId> prompt_of(const OpenAiRequest& r) {
    const char* param = r.route == OpenAiRoute::ChatCompletions ? "messages" : "prompt";
    std::vector<TokenId> tokens;
    try {
      tokens = encode_request(model, r.engine);
    } catch (const std::invalid_argument& e) {
      throw ApiError(400, e.what(), param);
    }
    if (static_cast<int64_t>(tokens.size()) >= options.context_length) {
      throw ApiError(400,
                     "the prompt has " + std::to_string(tokens.size()) + " tokens and the context holds " +
                         std::to_string(options.context_length) + ", leaving no room to generate",
                     param, "invalid_request_error", "context_length_exceeded");
    }
    return tokens;
  }

  ApiError body_too_large() const {
    return ApiError(413, "the request body is over the limit of " + std::to_string(options.max_body_bytes) + " bytes");
  }

  void complete(OpenAiRoute route, const httplib::Request& req, const std::string& body, httplib::Response& res) {
    OpenAiRequest r = read_openai_request(route, body);
    r.engine.client = client_label(req.get_header_value("User-Agent"), req.remote_addr);
    auto a = std::make_shared<Answer>();
    const std::vector<TokenId> prompt = prompt_of(r);
    a->header = {route, std::string(route == OpenAiRoute::ChatCompletions ? "chatcmpl-" : "cmpl-") + id_prefix + std::to_string(++serial),
                 static_cast<int64_t>(std::time(nullptr)), options.model_name};
    a->prompt_tokens = static_cast<int32_t>(prompt.size());
    a->top_logprobs = r.top_logprobs;
    r.engine.messages.clear();
    r.engine.prompt.clear();
    r.engine.prompt_tokens = prompt;
    if (queue_full()) {
      res.set_header("Retry-After", "1");
      throw ApiError(503, std::to_string(options.max_queue) + " requests are already waiting for the engine; retry shortly",
                     "", "server_error", "queue_full");
    }
    a->place = std::make_unique<InFlight>(in_flight);
    a->id = engine.submit(std::move(r.engine));

    // The first tokens (or the end) before any header, so that a request the engine refuses is
    // still answered with an error status.
    StreamEvents first = next_events(a->id);
    auto [first_text, first_logprobs] = add(*a, first);
    if (a->finished == StopReason::Failed) throw ApiError(500, a->error, "", "server_error");
    if (!r.stream) {
      std::vector<AnswerLogprob> logprobs = std::move(first_logprobs);
      while (!a->finished) {
        StreamEvents events = next_events(a->id);
        auto [text, more] = add(*a, events);
        logprobs.insert(logprobs.end(), more.begin(), more.end());
      }
      if (a->finished == StopReason::Failed) throw ApiError(500, a->error, "", "server_error");
      res.set_content(answer_json(a->header, a->text, *a->finished, a->prompt_tokens, a->completion_tokens,
                                  a->top_logprobs >= 0 ? &logprobs : nullptr).dump(),
                      "application/json");
      return;
    }
    const bool include_usage = r.include_usage;
    auto pending = std::make_shared<std::pair<std::string, std::vector<AnswerLogprob>>>(std::move(first_text), std::move(first_logprobs));
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider("text/event-stream", [this, a, pending, include_usage](size_t, httplib::DataSink& sink) {
      const bool chat = a->header.route == OpenAiRoute::ChatCompletions;
      const auto logprobs_of = [&](const std::vector<AnswerLogprob>& l) { return a->top_logprobs >= 0 ? &l : nullptr; };
      // A client that is gone: its request ends, its memory freed at the next step.
      const auto send = [&](const std::string& event) {
        if (sink.write(event.data(), event.size())) return true;
        streams.drop(a->id);
        engine.cancel(a->id);
        return false;
      };
      size_t offset = 0;
      const auto send_delta = [&](const std::string& text, const std::vector<AnswerLogprob>& logprobs) {
        if (text.empty() && logprobs.empty()) return true;
        const bool ok = send(sse_event(chunk_json(a->header, std::nullopt, text, std::nullopt, logprobs_of(logprobs), offset)));
        offset += text.size();
        return ok;
      };
      if (chat && !send(sse_event(chunk_json(a->header, std::string("assistant"), "", std::nullopt, nullptr, 0)))) return false;
      if (!send_delta(pending->first, pending->second)) return false;
      while (!a->finished) {
        StreamEvents events = next_events(a->id);
        const bool ended = events.finished.has_value();
        auto [text, logprobs] = add(*a, events);
        if (!send_delta(text, logprobs)) return false;
        if (ended) break;
      }
      if (a->finished == StopReason::Failed) {
        if (!send(sse_event(ApiError(500, a->error, "", "server_error").json()))) return false;
      } else {
        if (!send(sse_event(chunk_json(a->header, std::nullopt, "", a->finished, nullptr, offset)))) return false;
        if (include_usage && !send(sse_event(usage_chunk_json(a->header, a->prompt_tokens, a->completion_tokens)))) return false;
      }
      if (!send(std::string(kSseDone))) return false;
      sink.done();
      return true;
    });
  }

  // Runs `answer`, answering a refusal with its error.
  template <class Answer>
  static void guarded(httplib::Response& res, Answer&& answer) {
    try {
      answer();
    } catch (const ApiError& e) {
      send_error(res, e);
    } catch (const std::exception& e) {
      send_error(res, ApiError(500, e.what(), "", "server_error"));
    }
  }

  // A POST route of `route`: the body read here, whatever its content type says (httplib would parse
  // a form-encoded one, as curl -d sends, and refuse it past 8 KiB), up to max_body_bytes.
  httplib::Server::HandlerWithContentReader posted(OpenAiRoute route) {
    return [this, route](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& read) {
      guarded(res, [&] {
        std::string body;
        bool too_large = false;
        const bool whole = read([&](const char* data, size_t n) {
          too_large = body.size() + n > options.max_body_bytes;
          if (!too_large) body.append(data, n);
          return !too_large;
        });
        if (too_large || res.status == 413) throw body_too_large();
        if (!whole) throw ApiError(400, "the request body could not be read to its end");
        complete(route, req, body, res);
      });
    };
  }

  void models(httplib::Response& res) {
    const json model_entry = {{"id", options.model_name}, {"object", "model"}, {"created", 0}, {"owned_by", "inferscope"},
                              {"max_model_len", options.context_length}};  // vLLM's name for the context
    res.set_content(json{{"object", "list"}, {"data", json::array({model_entry})}}.dump(), "application/json");
  }

  void metrics(httplib::Response& res) {
    res.set_content(prometheus_text(engine.metrics_snapshot(), options.model_name), "text/plain; version=0.0.4; charset=utf-8");
  }

  // The engine's own metrics snapshot, as --metrics-json writes it, for a workbench attached to this
  // server. ?after_s=T leaves out the steps that ended by T and the requests that ended by T: what a
  // poller that asked at T has seen already.
  void engine_metrics(const httplib::Request& req, httplib::Response& res) {
    EngineMetricsSnapshot m = engine.metrics_snapshot();
    if (req.has_param("after_s")) {
      const std::string text = req.get_param_value("after_s");
      double after = 0;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), after);
      if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(after)) {
        throw ApiError(400, "after_s must be a number of seconds, not '" + text + "'", "after_s");
      }
      std::erase_if(m.steps, [&](const StepMetrics& st) { return st.time_s <= after; });
      std::erase_if(m.requests, [&](const RequestMetrics& r) {
        return !r.finish_reason.empty() && r.arrival_s + r.e2e_request_latency_seconds <= after;
      });
    }
    res.set_content(metrics_json(m).dump(), "application/json");
  }

  // The engine's block table between two steps (it waits for the step in progress).
  void engine_kv(httplib::Response& res) {
    const std::optional<KvSnapshot> kv = engine.kv_snapshot();
    if (!kv) throw ApiError(503, "the engine has stopped", "", "server_error");
    res.set_content(kv_snapshot_json(*kv).dump(), "application/json");
  }

  static void health(httplib::Response& res) { res.set_content(R"({"status":"ok"})", "application/json"); }

  // CORS headers on every answer where an origin is allowed; the API key on the /v1 routes (as vLLM
  // asks it: /health and /metrics stay open to probes and scrapers) and on /inferscope/ (the block
  // table holds every client's token ids).
  httplib::Server::HandlerResponse before_routing(const httplib::Request& req, httplib::Response& res) {
    if (!options.cors_origin.empty()) {
      res.set_header("Access-Control-Allow-Origin", options.cors_origin);
      res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type");
      res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
      if (req.method == "OPTIONS") {
        res.status = 204;
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    const bool keyed = req.path.rfind("/v1/", 0) == 0 || req.path.rfind("/inferscope/", 0) == 0;
    if (options.api_key.empty() || !keyed) return httplib::Server::HandlerResponse::Unhandled;
    const std::string auth = req.get_header_value("Authorization");
    const std::string bearer = "Bearer ";
    if (auth.rfind(bearer, 0) == 0 && same_key(auth.substr(bearer.size()), options.api_key)) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    send_error(res, ApiError(401, auth.empty() ? "an API key is required: send it as \"Authorization: Bearer KEY\""
                                               : "the API key is not valid",
                             "", "authentication_error", "invalid_api_key"));
    return httplib::Server::HandlerResponse::Handled;
  }

  // What httplib answers itself (no route, a body over the limit) in OpenAI's shape.
  void on_error(const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 404) {
      send_error(res, ApiError(404, "no route " + req.method + " " + req.path, "", "not_found_error"));
    } else if (res.status == 413) {
      send_error(res, body_too_large());
    } else {
      send_error(res, ApiError(res.status, "the request could not be read (HTTP " + std::to_string(res.status) + ")"));
    }
  }
};

bool loopback_host(const std::string& host) { return host == "127.0.0.1" || host == "localhost" || host == "::1"; }

OpenAiServer::OpenAiServer(const LlamaModel& model, InferenceEngine& engine, RequestStreams& streams, ServeOptions options)
    : impl_(std::make_unique<Impl>(model, engine, streams, std::move(options))) {
  Impl& s = *impl_;
  if (!loopback_host(s.options.host) && s.options.api_key.empty()) {
    throw std::runtime_error("listening on " + s.options.host + " opens the server beyond this machine: it needs an API key");
  }
  const size_t threads = static_cast<size_t>(std::max(s.options.http_threads, 2));
  s.http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  s.http.set_payload_max_length(s.options.max_body_bytes);
  const auto write_s = static_cast<time_t>(std::ceil(s.options.write_timeout_s));
  s.http.set_write_timeout(write_s, 0);
  s.http.set_pre_routing_handler([&s](const httplib::Request& req, httplib::Response& res) { return s.before_routing(req, res); });
  s.http.set_error_handler([&s](const httplib::Request& req, httplib::Response& res) { s.on_error(req, res); });
  s.http.Post("/v1/chat/completions", s.posted(OpenAiRoute::ChatCompletions));
  s.http.Post("/v1/completions", s.posted(OpenAiRoute::Completions));
  s.http.Get("/v1/models", [&s](const httplib::Request&, httplib::Response& res) { s.models(res); });
  s.http.Get("/health", [](const httplib::Request&, httplib::Response& res) { Impl::health(res); });
  s.http.Get("/metrics", [&s](const httplib::Request&, httplib::Response& res) { s.metrics(res); });
  s.http.Get(kEngineMetricsPath, [&s](const httplib::Request& req, httplib::Response& res) {
    Impl::guarded(res, [&] { s.engine_metrics(req, res); });
  });
  s.http.Get(kEngineKvPath, [&s](const httplib::Request&, httplib::Response& res) { Impl::guarded(res, [&] { s.engine_kv(res); }); });
  // The listening socket's options. SO_REUSEADDR lets a restarted server take its port back from
  // connections still in TIME_WAIT; httplib's default SO_REUSEPORT would also let a second server
  // bind the same port beside this one and take half its connections. And Debian's httplib (a
  // compiled library) listens with a backlog of 5: a burst of clients connecting at once overflowed
  // it, each dropped SYN costing its client a 1 s retransmit, so this socket listens again below
  // with a larger one.
  int listening = -1;
  s.http.set_socket_options([&listening](socket_t sock) {
    reuse_address(sock);
    listening = sock;
  });
  s.port = s.options.port == 0 ? s.http.bind_to_any_port(s.options.host) : (s.http.bind_to_port(s.options.host, s.options.port) ? s.options.port : -1);
  if (s.port < 0) {
    throw std::runtime_error("cannot listen on " + s.options.host + ":" + std::to_string(s.options.port) +
                             " (in use, or not an address of this machine)");
  }
  if (listening >= 0) ::listen(listening, kListenBacklog);
  s.http.set_socket_options(reuse_address);  // `listening` is about to go
}

OpenAiServer::~OpenAiServer() = default;

int32_t OpenAiServer::port() const { return impl_->port; }

std::string OpenAiServer::url() const { return "http://" + impl_->options.host + ":" + std::to_string(impl_->port); }

void OpenAiServer::serve() {
  {
    std::lock_guard lock(impl_->serving_mu);
    if (impl_->draining) return;  // stopped before it began
    impl_->serving = true;
  }
  impl_->http.listen_after_bind();
  impl_->listening_ended = true;
}

void OpenAiServer::stop(double drain_s) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(drain_s));
  impl_->drain_deadline_ns = deadline.time_since_epoch().count();
  bool serving = false;
  {
    std::lock_guard lock(impl_->serving_mu);
    impl_->draining = true;
    serving = impl_->serving;
  }
  // httplib's stop() is lost on a server not yet running: wait the moment until serve()'s listen runs.
  while (serving && !impl_->http.is_running() && !impl_->listening_ended) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  impl_->http.stop();
}

}  // namespace inferscope
