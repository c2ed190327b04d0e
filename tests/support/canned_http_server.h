// A scripted HTTP/1.1 server on 127.0.0.1 for the remote-client tests: each request gets the answer a
// handler returns, written in chunks with pauses, possibly cut short or held open, so that streams
// split anywhere, error statuses, cut bodies, silences and client hang-ups can be produced on demand.
#pragma once
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace inferscope::test {

struct CannedRequest {
  std::string method;
  std::string path;
  std::string headers;  // the raw header lines
  std::string body;
};

struct CannedResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::vector<std::string> chunks;          // written one by one (the client sees them split there)
  int chunk_delay_ms = 0;                   // pause before each chunk after the first
  std::optional<size_t> content_length;     // sent when set; more than the chunks hold = a cut body
  int silence_before_ms = 0;                // pause before the status line
  bool hold_until_client_closes = false;    // after the chunks, wait until the client hangs up
};

// One answer in a single chunk.
inline CannedResponse canned(std::string body, int status = 200, std::string content_type = "application/json") {
  CannedResponse r;
  r.status = status;
  r.content_type = std::move(content_type);
  r.chunks = {std::move(body)};
  return r;
}

// A server-sent event stream: each of `events` as one "data:" event, written as its own chunk.
inline CannedResponse canned_sse(const std::vector<std::string>& events) {
  CannedResponse r;
  r.content_type = "text/event-stream";
  for (const std::string& e : events) r.chunks.push_back("data: " + e + "\n\n");
  return r;
}

class CannedHttpServer {
 public:
  using Handler = std::function<CannedResponse(const CannedRequest&)>;
  explicit CannedHttpServer(Handler handler);
  ~CannedHttpServer();
  CannedHttpServer(const CannedHttpServer&) = delete;
  CannedHttpServer& operator=(const CannedHttpServer&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<CannedRequest> requests() const;
  // Waits up to timeout_ms for a held response's client to hang up; true when it did.
  bool wait_for_hang_up(int timeout_ms);

 private:
  void serve();
  void answer(int fd);

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mu_;
  std::condition_variable hung_up_cv_;
  bool hung_up_ = false;
  std::vector<CannedRequest> requests_;
  std::thread thread_;
};

// A port on 127.0.0.1 where nothing listens (bound, then closed).
int unused_port();

}  // namespace inferscope::test
