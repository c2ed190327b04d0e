// The one HTTP client of core/ (libcurl): plain requests and streamed bodies, with connect and idle
// timeouts and cancellation from another thread. Every failure is an HttpError naming the method,
// the URL and what went wrong (the server's answer quoted for an HTTP error status).
#pragma once
#include <atomic>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace inferscope {

enum class HttpFailure {
  Connect,    // no connection: refused, unreachable, name not resolved
  Timeout,    // connecting took too long, or no byte arrived for idle_timeout_s
  Tls,        // certificate or handshake failure
  Status,     // the server answered with a status outside 2xx
  Cancelled,  // the caller's cancel flag, or its body sink said stop
  Transfer,   // the connection broke mid-answer, or anything else curl reports
};

class HttpError : public std::runtime_error {
 public:
  HttpError(HttpFailure failure, const std::string& message, long status = 0, std::string body = {})
      : std::runtime_error(message), failure_(failure), status_(status), body_(std::move(body)) {}
  HttpFailure failure() const { return failure_; }
  long status() const { return status_; }           // the HTTP status for Status, else 0
  const std::string& body() const { return body_; }  // the server's answer for Status

 private:
  HttpFailure failure_;
  long status_;
  std::string body_;
};

struct HttpRequest {
  std::string url;
  bool post = false;                 // POST `body` (as JSON) instead of GET
  std::string body;
  std::vector<std::string> headers;  // "Name: value"
  double connect_timeout_s = 5;
  double idle_timeout_s = 120;       // fail when no byte arrives for this long (0: never)
  double total_timeout_s = 0;        // fail when the whole request takes longer (0: never)
};

struct HttpResponse {
  long status = 0;
  std::string content_type;
  std::string body;                  // empty when a sink took it
};

// Receives a 2xx body as it arrives, in chunks split anywhere; returns false to stop the transfer.
using HttpBodySink = std::function<bool(std::string_view chunk)>;

// Performs the request. A 2xx answer returns (its body collected, or fed to `sink` when given); any
// other status throws HttpError(Status) with the body. `cancel`, checked as bytes arrive and at least
// every 100 ms while waiting, ends the transfer with HttpError(Cancelled) and closes the connection
// (servers abort the request when the client goes away). Safe to call from several threads at once.
HttpResponse http_perform(const HttpRequest& request, const HttpBodySink& sink = {},
                          const std::atomic<bool>* cancel = nullptr);

}  // namespace inferscope
