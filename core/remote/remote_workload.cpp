#include "core/remote/remote_workload.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/remote/http_client.h"
#include "core/remote/remote_request.h"

namespace inferscope {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// One scrape of /metrics, read; nullopt (with the reason in `error`) when it cannot be had or read.
std::optional<ServerScrape> scrape(const RemoteEndpoint& endpoint, ServerKind kind, std::string& error) {
  HttpRequest request;
  request.url = endpoint_url(endpoint, "/metrics");
  request.headers = endpoint_headers(endpoint);
  request.total_timeout_s = 5;
  try {
    return read_server_scrape(MetricSnapshot::parse(http_perform(request).body), kind);
  } catch (const std::exception& e) {
    error = e.what();
    return std::nullopt;
  }
}

// Scrapes the gauges every `interval_s` on its own thread until stopped.
class GaugePoller {
 public:
  GaugePoller(const RemoteEndpoint& endpoint, ServerKind kind, double interval_s, Clock::time_point start)
      : thread_([=, this] {
          std::unique_lock lock(mu_);
          while (!stop_) {
            lock.unlock();
            std::string ignored;  // a failed scrape mid-run leaves a gap; the end scrape reports errors
            const std::optional<ServerScrape> m = scrape(endpoint, kind, ignored);
            lock.lock();
            if (m) samples_.push_back({seconds_since(start), m->gauges});
            wake_.wait_for(lock, std::chrono::duration<double>(interval_s), [this] { return stop_; });
          }
        }) {}

  std::vector<ServerSample> stop() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
    return std::move(samples_);
  }

 private:
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::vector<ServerSample> samples_;
  std::thread thread_;  // last: starts once the members it uses exist
};

}  // namespace

RemoteWorkloadResult run_remote_workload(const RemoteEndpoint& endpoint, ServerKind kind,
                                         const std::vector<RemoteWorkloadRequest>& requests,
                                         const RemoteWorkloadOptions& options) {
  RemoteWorkloadResult result;
  std::vector<size_t> order(requests.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return requests[a].arrival_s < requests[b].arrival_s; });
  result.requests.resize(requests.size());

  const std::optional<ServerScrape> before = scrape(endpoint, kind, result.metrics_error);
  const Clock::time_point start = Clock::now();
  GaugePoller poller(endpoint, kind, options.metrics_interval_s, start);

  // Client slots take the requests in arrival order; each waits for its request's arrival time.
  std::mutex mu;
  size_t next = 0;
  int32_t done = 0;
  const auto client = [&] {
    for (;;) {
      size_t index;
      {
        std::lock_guard lock(mu);
        if (next == order.size()) return;
        index = order[next++];
      }
      const RemoteWorkloadRequest& r = requests[index];
      std::this_thread::sleep_until(start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(r.arrival_s)));
      RemoteRequestResult& out = result.requests[index];
      out.id = r.id;
      out.arrival_s = r.arrival_s;
      out.sent_s = seconds_since(start);
      if (options.cancel != nullptr && options.cancel->load()) {
        out.reply.outcome = RemoteOutcome::Cancelled;
      } else {
        const nlohmann::json body = completion_request_body(endpoint, kind, r.prompt, options.sampling, r.max_tokens);
        out.reply = stream_completion(endpoint, "/v1/completions", body, {}, options.cancel, options.timeouts);
      }
      std::lock_guard lock(mu);
      ++done;
      if (options.on_progress) options.on_progress(done, static_cast<int32_t>(requests.size()));
    }
  };
  const size_t limit = options.max_concurrency > 0 ? static_cast<size_t>(options.max_concurrency) : requests.size();
  std::vector<std::thread> clients;
  for (size_t i = 0; i < std::min(limit, requests.size()); ++i) clients.emplace_back(client);
  for (std::thread& t : clients) t.join();
  result.duration_s = seconds_since(start) - (order.empty() ? 0 : requests[order.front()].arrival_s);
  result.samples = poller.stop();

  std::sort(result.requests.begin(), result.requests.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  if (const std::optional<ServerScrape> after = before ? scrape(endpoint, kind, result.metrics_error) : std::nullopt) {
    result.counters = counters_increase(before->counters, after->counters);
  }
  return result;
}

}  // namespace inferscope
