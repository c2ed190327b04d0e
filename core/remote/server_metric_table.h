// Which /metrics names each server (vLLM, SGLang, llama-server) publishes for each quantity the
// workbench reads, release by release: one row per name, with the releases that export it by default.
// The readers (server_metrics.h) take a quantity's newest name and fall back to older ones; the
// Connect dialog and the dashboard say which known releases a scrape's names fit, and which
// quantities the server does not publish. Checked against the releases' own code by the fixtures of
// tests/fixtures/metrics/releases (their README cites each file and line).
#pragma once
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/remote/metric_snapshot.h"
#include "core/remote/server_probe.h"

namespace inferscope {

enum class ServerQuantity {
  PromptTokens,        // counter: prompt tokens (each server's own meaning: see prompt_tokens_meaning)
  PromptTokensCached,  // counter: prompt tokens found in a cache, where counted apart
  GenerationTokens,    // counter
  GenerationSeconds,   // counter: the time requests spent generating, summed over requests (llama-server)
  LiveTokens,          // counter moving while requests run (SGLang's realtime_tokens_total, by `mode`)
  Steps,               // counter, or a histogram whose _count is the number of engine iterations
  Preemptions,
  PrefixCacheQueries,  // counters: prompt tokens looked up in the prefix cache, and found
  PrefixCacheHits,
  SpecDrafts,          // counters of speculative decoding
  SpecDraftTokens,
  SpecAcceptedTokens,
  SpecAcceptedPerPosition,  // a counter with a `position` label
  RequestsRunning,          // gauges
  RequestsWaiting,
  KvCacheUsage,
  PrefixCacheHitRate,
  SpecAcceptRate,
  SpecAcceptLength,
  GenThroughput,  // generated tokens per second, as the server measures it live
  Ttft,           // latency histograms, in ServerLatency's order
  InterTokenLatency,
  EndToEndLatency,
  QueueTime,
};
inline constexpr size_t kServerQuantities = static_cast<size_t>(ServerQuantity::QueueTime) + 1;

// One name a server publishes a quantity under, and the releases that export it by default.
struct MetricRow {
  ServerKind server;
  ServerQuantity quantity;
  std::string_view name;
  std::string_view since{};  // the first release exporting it ("" : every release the table knows)
  std::string_view until{};  // the last one ("" : still exported)
  // Exported only with a feature on (a draft model, a scheduling mode): its absence says nothing of
  // the release.
  bool on_demand = false;
  // A counter that moves only when a request ends (all its tokens at once), not as they are computed.
  bool at_request_end = false;
};

std::span<const MetricRow> metric_rows();
// The releases the table was checked against, oldest first ("0.9.1", ...; llama.cpp: the
// llama-cpp-python release whose vendored llama.cpp was read).
std::span<const std::string_view> known_releases(ServerKind kind);
// -1, 0, 1 as release a is older, the same, newer than b ("0.10.1.1" < "0.10.2" < "0.11.0";
// "0.4.10.post2" after "0.4.10").
int compare_releases(std::string_view a, std::string_view b);

// Whether the counter `name` moves only when a request ends.
bool counted_at_request_end(ServerKind kind, std::string_view name);
// What `kind`'s prompt-token counter counts: cached tokens included or not, and when.
std::string_view prompt_tokens_meaning(ServerKind kind);
// Whether that counter includes the prompt tokens found in a cache (vLLM, SGLang, Inferscope) or
// counts only those computed (llama-server).
bool prompt_tokens_include_cached(ServerKind kind);

// The names `kind` publishes `q` under, newest first (an Inferscope server: vLLM's current names,
// its steps its own).
std::vector<std::string_view> metric_names(ServerKind kind, ServerQuantity q);

// Which known releases a scrape's names fit: every name present is exported by the release, and
// every name the release always exports is present.
struct ReleaseMatch {
  std::vector<std::string_view> releases;      // the known releases that fit, oldest first
  // What the dashboard shows that nothing in the scrape gives ("KV cache usage", "time to first
  // token", ...): no name of the quantity, nor of one it is computed from.
  std::vector<std::string_view> unpublished;
};
ReleaseMatch match_release(const MetricSnapshot& metrics, ServerKind kind);

// "vLLM 0.9.2 to 0.11.0", "SGLang 0.5.23", "llama.cpp (llama-cpp-python 0.3.36)", "no vLLM release
// checked (0.9.1 to 0.34.0)"; "" for a
// server the table has no releases of.
std::string release_range_text(ServerKind kind, const ReleaseMatch& match);
// "KV cache usage, preemptions"; "" when it publishes everything.
std::string unpublished_text(const ReleaseMatch& match);

}  // namespace inferscope
