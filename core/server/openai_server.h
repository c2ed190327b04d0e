// The OpenAI-compatible HTTP server over one engine (inferscope-cli serve): each request becomes a
// request of the same continuous-batching engine. HTTP threads only read the request, render and
// tokenize its prompt, queue it and stream what the engine produces (RequestStreams); nothing locks
// a whole generation. Routes: POST /v1/chat/completions and /v1/completions (streamed as server-sent
// events or whole), GET /v1/models, /health and /metrics (prometheus_exposition.h). Errors are
// OpenAI's JSON shape with their status: 400 naming the field, 401 without the API key on a /v1
// route when one is set, 404 for an unknown route, 503 with Retry-After while more than max_queue
// requests wait for the engine, 413 for
// a body over the limit, 500 for a request the engine failed. A client that hangs up or stops
// reading for write_timeout_s has its request cancelled. Built on Debian's cpp-httplib (kept out of
// this header).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/engine/inference_engine.h"
#include "core/model/llama_model.h"
#include "core/server/request_streams.h"

namespace inferscope {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int32_t port = 8080;                   // 0: a free port (port() tells which)
  std::string api_key;                   // "": no key asked
  std::string cors_origin;               // "": no CORS headers
  size_t max_body_bytes = size_t{8} << 20;
  std::string model_name;                // the id /v1/models lists and every answer carries ("": the model's name)
  int32_t context_length = 0;            // the engine's: a prompt that leaves no room to generate is refused
  double write_timeout_s = 30;           // a client that reads nothing this long is cut off
  int32_t http_threads = 96;             // connections served at once
  int32_t max_queue = 256;               // requests waiting for the engine beyond this: 503 with Retry-After (0: no limit)
};

// Whether `host` reaches this machine only (127.0.0.1, localhost, ::1): elsewhere a server asks for a key.
bool loopback_host(const std::string& host);

class OpenAiServer {
 public:
  // Binds options.host:options.port; throws std::runtime_error saying why it cannot (a host beyond
  // this machine without an API key included). `engine` must report to streams.callbacks() (built
  // with them, or a CallbackRouter's guest view over an engine) and outlive the server.
  OpenAiServer(const LlamaModel& model, InferenceEngine& engine, RequestStreams& streams, ServeOptions options);
  ~OpenAiServer();
  OpenAiServer(const OpenAiServer&) = delete;
  OpenAiServer& operator=(const OpenAiServer&) = delete;

  int32_t port() const;
  std::string url() const;  // http://host:port
  // Serves until stop(), on the calling thread; returns once every connection has ended.
  void serve();
  // Stops accepting connections; requests in flight have `drain_s` to finish before they are
  // cancelled. Returns at once; serve() returns when the last one has ended.
  void stop(double drain_s);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace inferscope
