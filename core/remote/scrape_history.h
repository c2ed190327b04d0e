// What the scrapes of one server's /metrics add up to (the workbench's remote engine on a server that
// is not another Inferscope): each interval between two scrapes as one dashboard step, the server's
// latency percentiles over a window of the past, the queue gauges, and the totals since the first
// scrape. Plain data, no sockets or clocks: the poller feeds it, and the fuzzer does too.
#pragma once
#include <array>
#include <deque>
#include <optional>
#include <string>
#include <utility>

#include "core/engine/engine_metrics.h"
#include "core/remote/request_end_spread.h"
#include "core/remote/server_metrics.h"

namespace inferscope {

class ScrapeHistory {
 public:
  explicit ScrapeHistory(double latency_window_s) : latency_window_s_(latency_window_s) {}

  // Folds `scrape`, taken `t` seconds after connecting, into `metrics`: the interval since the last
  // scrape as a step, the queue. The first scrape is the baseline of every total.
  void take(const ServerScrape& scrape, double t, EngineMetrics& metrics);
  // Adds to a snapshot of those metrics what the scrapes tell: the quantities the server does not
  // report, its speculation, and the totals since the first scrape as the server counts them.
  void complete(EngineMetricsSnapshot& snapshot) const;
  // The KV pool the server states (vLLM), as of the last scrape.
  const std::optional<ServerKvPool>& kv_pool() const { return kv_pool_; }

 private:
  // The server's latency percentiles over the window ending with this scrape, onto its step.
  void add_latency_percentiles(const ServerScrape& scrape, double t, StepMetrics& step);
  // The tokens generated in an interval of `seconds` ending with this scrape: from the server's live
  // token counters or its live throughput gauge where it has them, spread over the requests'
  // generation time where its counter moves only when a request ends, else the counter's increase.
  double generated_tokens(const ServerScrape& scrape, const ServerCounters& increase, double seconds);

  double latency_window_s_;
  std::optional<ServerCounters> baseline_, latest_counters_;
  std::optional<ServerGauges> latest_gauges_;
  std::optional<ServerKvPool> kv_pool_;
  // Per ServerLatency: (scrape time, histogram) over the window.
  std::array<std::deque<std::pair<double, HistogramSeries>>, kServerLatencies> latency_history_;
  double last_scrape_s_ = 0;
  RequestEndSpread generation_spread_;
  std::string throughput_basis_;  // how generated_tokens measured the last interval (the snapshot's)
  std::string release_range_, unpublished_;  // of the last scrape
};

}  // namespace inferscope
