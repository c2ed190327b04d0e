// What a server's /metrics says about serving, in the workbench's terms whichever server it is
// (llama-server, vLLM, SGLang): cumulative counters and current gauges, each absent when that server
// does not report it, so a panel can say so instead of drawing zeros.
#pragma once
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "core/engine/engine_metrics.h"
#include "core/remote/metric_snapshot.h"
#include "core/remote/server_probe.h"

namespace inferscope {

// Totals since the server started, summed over its engines and models, each engine once (not once per
// rank or process that writes a copy of its numbers).
struct ServerCounters {
  std::optional<double> prompt_tokens;         // prompt tokens in the server's own meaning (prompt_tokens_meaning)
  std::optional<double> prompt_tokens_cached;  // of those, found in a cache, where the server counts them apart
  std::optional<double> generation_tokens;
  std::optional<double> generation_seconds;    // time finished requests spent generating, summed over them (llama-server)
  // Tokens counted as they are computed (SGLang's realtime_tokens_total by `mode`): prompt tokens
  // computed and found cached, and generated tokens.
  std::optional<double> live_prompt_computed, live_prompt_cached, live_generated;
  std::optional<double> steps;                 // engine iterations (llama_decode calls, vLLM iterations)
  std::optional<double> preemptions;
  std::optional<double> prefix_cache_queries;  // prompt tokens looked up, and found
  std::optional<double> prefix_cache_hits;
  std::optional<double> spec_drafts;           // speculative verification steps
  std::optional<double> spec_draft_tokens;
  std::optional<double> spec_accepted_tokens;
  // [i]: drafts whose token i was accepted (the `position` label); empty when not reported.
  std::vector<double> spec_accepted_per_position;
};

// The server's state at the scrape, each engine once: SGLang's total under priority="" rather than its
// parts, one copy of an engine's gauge among its ranks' and API server processes' copies (the largest).
struct ServerGauges {
  std::optional<double> requests_running;  // summed over engines
  std::optional<double> requests_waiting;
  std::optional<double> kv_cache_usage;    // 0..1, the mean over engines (each has its own pool)
  // Rates some servers publish as gauges instead of counters (SGLang), means over engines:
  std::optional<double> prefix_cache_hit_rate;  // 0..1
  std::optional<double> spec_accept_rate;       // 0..1, accepted draft tokens / draft tokens
  std::optional<double> spec_accept_length;     // tokens per verify step (accepted + 1)
  std::optional<double> gen_throughput;         // generated tokens/s as the server measures it live, summed
};

// A server's KV pool as it states it: vLLM's cache_config_info gauge (labels block_size and
// num_gpu_blocks, the blocks summed over its engines).
struct ServerKvPool {
  int64_t block_size = 0;  // tokens per block
  int64_t blocks = 0;
};

// read_counters, read_latency_histogram and read_gauges throw std::invalid_argument naming the metric
// when it has a type they do not read for it (a summary where they sum a counter, a counter where they
// want a histogram, ...); read_counters also when a `position` label is not a draft position (0..1023).
ServerCounters read_counters(const MetricSnapshot& metrics, ServerKind kind);
// One of the server's latency histograms (vLLM's time_to_first_token_seconds,
// inter_token_latency_seconds, e2e_request_latency_seconds, request_queue_time_seconds; SGLang's
// the same but queue_time_seconds), summed over engines; nullopt when it keeps none (llama-server).
std::optional<HistogramSeries> read_latency_histogram(const MetricSnapshot& metrics, ServerKind kind, ServerLatency latency);
// nullopt when the server states no pool (llama-server, SGLang) or the labels are not whole numbers.
std::optional<ServerKvPool> read_kv_pool(const MetricSnapshot& metrics, ServerKind kind);
ServerGauges read_gauges(const MetricSnapshot& metrics, ServerKind kind);

// Everything the workbench reads from one scrape of a server.
struct ServerScrape {
  ServerCounters counters{};
  ServerGauges gauges{};
  std::array<std::optional<HistogramSeries>, kServerLatencies> latency{};  // by ServerLatency
  std::optional<ServerKvPool> kv_pool{};
  // The server adds a request's generated tokens to its counter only when the request ends.
  bool generation_at_request_end = false;
  // Its prompt-token counter includes the tokens found in a cache (prompt_tokens_include_cached).
  bool prompt_includes_cached = true;
  // release_range_text and unpublished_text (server_metric_table.h) of the scrape.
  std::string release_range{}, unpublished{};
};
// Throws std::invalid_argument as the readers above.
ServerScrape read_server_scrape(const MetricSnapshot& metrics, ServerKind kind);

// later - earlier, field by field (absent when either lacks it); a counter that went down (the server
// restarted) counts from zero.
ServerCounters counters_increase(const ServerCounters& earlier, const ServerCounters& later);

}  // namespace inferscope
