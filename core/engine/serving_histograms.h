// Request latencies over the engine's whole life, as histograms in Prometheus' form (upper bounds, a
// count per bucket, the sum and the count), with vLLM's bucket bounds, so that a /metrics scrape of
// inferscope-cli serve reads in vLLM's dashboards as vLLM's own. The window of recent requests in
// EngineMetricsSnapshot forgets; these never do.
#pragma once
#include <cstdint>
#include <vector>

namespace inferscope {

struct Histogram {
  std::vector<double> bounds;    // upper bounds, ascending; +Inf after them
  std::vector<uint64_t> counts;  // per bucket (bounds.size() + 1: the last is above every bound), not cumulative
  double sum = 0;
  uint64_t count = 0;

  explicit Histogram(std::vector<double> upper_bounds = {});
  void observe(double value);
};

struct ServingHistograms {
  Histogram time_to_first_token;  // arrival to first token (seconds, as every latency here)
  Histogram inter_token_latency;  // between a request's consecutive tokens
  Histogram e2e_request_latency;  // arrival to end, finished requests
  Histogram request_queue_time;   // arrival to first scheduled
  Histogram request_prefill_time; // first scheduled to first token
  Histogram request_decode_time;  // first token to last token

  ServingHistograms();
};

}  // namespace inferscope
