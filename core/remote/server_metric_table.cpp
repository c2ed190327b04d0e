#include "core/remote/server_metric_table.h"

#include <algorithm>
#include <array>
#include <vector>
#include <cctype>

namespace inferscope {
namespace {

using enum ServerQuantity;
constexpr ServerKind V = ServerKind::Vllm, S = ServerKind::Sglang, L = ServerKind::LlamaCpp;

// Newest name first within a quantity: the readers take the first one the scrape holds.
constexpr MetricRow kRows[] = {
    {V, PromptTokens, "vllm:prompt_tokens_total"},
    {V, PromptTokensCached, "vllm:prompt_tokens_cached_total", "0.34.0"},
    {V, GenerationTokens, "vllm:generation_tokens_total"},
    {V, Steps, "vllm:iteration_tokens_total"},
    {V, Preemptions, "vllm:num_preemptions_total"},
    {V, PrefixCacheQueries, "vllm:prefix_cache_queries_total", "0.9.2"},
    {V, PrefixCacheQueries, "vllm:gpu_prefix_cache_queries_total", "", "0.10.2"},
    {V, PrefixCacheHits, "vllm:prefix_cache_hits_total", "0.9.2"},
    {V, PrefixCacheHits, "vllm:gpu_prefix_cache_hits_total", "", "0.10.2"},
    {V, SpecDrafts, "vllm:spec_decode_num_drafts_total", "", "", true},
    {V, SpecDraftTokens, "vllm:spec_decode_num_draft_tokens_total", "", "", true},
    {V, SpecAcceptedTokens, "vllm:spec_decode_num_accepted_tokens_total", "", "", true},
    {V, SpecAcceptedPerPosition, "vllm:spec_decode_num_accepted_tokens_per_pos_total", "", "", true},
    {V, RequestsRunning, "vllm:num_requests_running"},
    {V, RequestsWaiting, "vllm:num_requests_waiting"},
    {V, KvCacheUsage, "vllm:kv_cache_usage_perc", "0.9.2"},
    {V, KvCacheUsage, "vllm:gpu_cache_usage_perc", "", "0.10.2"},
    {V, Ttft, "vllm:time_to_first_token_seconds"},
    {V, InterTokenLatency, "vllm:inter_token_latency_seconds", "0.10.2"},
    {V, InterTokenLatency, "vllm:time_per_output_token_seconds", "", "0.11.0"},
    {V, EndToEndLatency, "vllm:e2e_request_latency_seconds"},
    {V, QueueTime, "vllm:request_queue_time_seconds"},

    {S, PromptTokens, "sglang:prompt_tokens_total"},
    {S, PromptTokensCached, "sglang:cached_tokens_total"},
    {S, GenerationTokens, "sglang:generation_tokens_total"},
    {S, LiveTokens, "sglang:realtime_tokens_total", "0.5.23"},
    {S, RequestsRunning, "sglang:num_running_reqs"},
    {S, RequestsWaiting, "sglang:num_queue_reqs"},
    {S, KvCacheUsage, "sglang:token_usage"},
    {S, PrefixCacheHitRate, "sglang:cache_hit_rate"},
    {S, SpecAcceptRate, "sglang:spec_accept_rate", "0.5.4"},
    {S, SpecAcceptLength, "sglang:spec_accept_length"},
    {S, GenThroughput, "sglang:gen_throughput"},
    {S, Ttft, "sglang:time_to_first_token_seconds"},
    {S, InterTokenLatency, "sglang:inter_token_latency_seconds"},
    {S, EndToEndLatency, "sglang:e2e_request_latency_seconds"},
    {S, QueueTime, "sglang:queue_time_seconds", "0.5.3"},

    {L, PromptTokens, "llamacpp:prompt_tokens_total"},
    {L, PromptTokensCached, "llamacpp:prompt_tokens_cached_total"},
    {L, GenerationTokens, "llamacpp:tokens_predicted_total", "", "", false, true},
    {L, GenerationSeconds, "llamacpp:tokens_predicted_seconds_total", "", "", false, true},
    {L, Steps, "llamacpp:n_decode_total"},
    {L, SpecDrafts, "llamacpp:spec_decode_num_drafts_total"},
    {L, SpecDraftTokens, "llamacpp:spec_decode_num_draft_tokens_total"},
    {L, SpecAcceptedTokens, "llamacpp:spec_decode_num_accepted_tokens_total"},
    {L, SpecAcceptedPerPosition, "llamacpp:spec_decode_num_accepted_tokens_per_pos_total", "", "", true},
    {L, RequestsRunning, "llamacpp:requests_processing"},
    {L, RequestsWaiting, "llamacpp:requests_deferred"},
};

constexpr std::string_view kVllmReleases[] = {"0.9.1", "0.9.2", "0.10.1.1", "0.10.2", "0.11.0", "0.12.0", "0.34.0"};
constexpr std::string_view kSglangReleases[] = {"0.4.10.post2", "0.5.3", "0.5.4", "0.5.23"};
constexpr std::string_view kLlamaCppReleases[] = {"0.3.36"};

// What the dashboard shows of a server, and the quantities any one of which gives it (a rate the
// server computes, or the counters it is computed from).
struct Shown {
  std::string_view name;
  std::vector<ServerQuantity> any_of;
};
const Shown kShown[] = {
    {"running requests", {RequestsRunning}},
    {"waiting requests", {RequestsWaiting}},
    {"KV cache usage", {KvCacheUsage}},
    {"prompt tokens", {PromptTokens}},
    {"cached prompt tokens", {PromptTokensCached, PrefixCacheHits}},
    {"generated tokens", {GenerationTokens, LiveTokens}},
    {"engine steps", {Steps}},
    {"preemptions", {Preemptions}},
    {"prefix cache hit rate", {PrefixCacheHits, PrefixCacheHitRate}},
    {"speculative acceptance", {SpecAcceptedTokens, SpecAcceptRate, SpecAcceptLength}},
    {"acceptance by draft position", {SpecAcceptedPerPosition}},
    {"time to first token", {Ttft}},
    {"inter-token latency", {InterTokenLatency}},
    {"end-to-end latency", {EndToEndLatency}},
    {"queue time", {QueueTime}},
};

// A release's numbers, "post" dropped: "0.4.10.post2" -> {0, 4, 10, 2}.
std::vector<long> release_numbers(std::string_view r) {
  std::vector<long> out;
  long n = -1;
  for (char c : r) {
    if (std::isdigit(static_cast<unsigned char>(c)) != 0) {
      n = (n < 0 ? 0 : n * 10) + (c - '0');
    } else if (c == '.') {
      if (n >= 0) out.push_back(n);
      n = -1;
    }
  }
  if (n >= 0) out.push_back(n);
  return out;
}

bool exported_by(const MetricRow& row, std::string_view release) {
  return (row.since.empty() || compare_releases(row.since, release) <= 0) && (row.until.empty() || compare_releases(release, row.until) <= 0);
}

}  // namespace

std::span<const MetricRow> metric_rows() { return kRows; }

std::span<const std::string_view> known_releases(ServerKind kind) {
  switch (kind) {
    case ServerKind::Vllm: return kVllmReleases;
    case ServerKind::Sglang: return kSglangReleases;
    case ServerKind::LlamaCpp: return kLlamaCppReleases;
    default: return {};
  }
}

int compare_releases(std::string_view a, std::string_view b) {
  const std::vector<long> x = release_numbers(a), y = release_numbers(b);
  return x < y ? -1 : (y < x ? 1 : 0);
}

bool counted_at_request_end(ServerKind kind, std::string_view name) {
  return std::any_of(std::begin(kRows), std::end(kRows), [&](const MetricRow& row) { return row.server == kind && row.name == name && row.at_request_end; });
}

std::string_view prompt_tokens_meaning(ServerKind kind) {
  switch (kind) {
    case ServerKind::Vllm:
    case ServerKind::Inferscope:
      return "every prompt token, prefix-cache hits included, counted when the request's first token is out";
    case ServerKind::Sglang: return "every prompt token, cached ones included (cached_tokens_total counts those apart)";
    case ServerKind::LlamaCpp:
      return "prompt tokens computed, as each batch is, cached ones excluded (prompt_tokens_cached_total counts those)";
    case ServerKind::Unknown: break;
  }
  return "";
}

bool prompt_tokens_include_cached(ServerKind kind) { return kind != ServerKind::LlamaCpp; }

std::vector<std::string_view> metric_names(ServerKind kind, ServerQuantity q) {
  if (kind == ServerKind::Inferscope && q == Steps) return {"inferscope:steps_total"};
  const ServerKind table = kind == ServerKind::Inferscope ? ServerKind::Vllm : kind;
  std::vector<std::string_view> out;
  for (const MetricRow& row : kRows)
    if (row.server == table && row.quantity == q) out.push_back(row.name);
  return out;
}

ReleaseMatch match_release(const MetricSnapshot& metrics, ServerKind kind) {
  ReleaseMatch match;
  // Each row of `kind` and whether the scrape holds its name, looked up once.
  std::vector<std::pair<const MetricRow*, bool>> rows;
  std::array<bool, kServerQuantities> published{};
  for (const MetricRow& row : kRows) {
    if (row.server != kind) continue;
    rows.emplace_back(&row, metrics.find(row.name) != nullptr);
    if (rows.back().second) published[static_cast<size_t>(row.quantity)] = true;
  }
  for (std::string_view release : known_releases(kind)) {
    const bool fits = std::all_of(rows.begin(), rows.end(), [&](const auto& r) {
      const auto& [row, present] = r;
      return present ? exported_by(*row, release) : row->on_demand || !exported_by(*row, release);
    });
    if (fits) match.releases.push_back(release);
  }
  if (kind != ServerKind::Unknown && kind != ServerKind::Inferscope) {
    for (const Shown& shown : kShown) {
      const bool any = std::any_of(shown.any_of.begin(), shown.any_of.end(), [&](ServerQuantity q) { return published[static_cast<size_t>(q)]; });
      if (!any) match.unpublished.push_back(shown.name);
    }
  }
  return match;
}

std::string release_range_text(ServerKind kind, const ReleaseMatch& match) {
  const std::span<const std::string_view> known = known_releases(kind);
  if (known.empty()) return "";
  const std::string server(server_kind_name(kind));
  const auto range = [&](std::string_view first, std::string_view last) {
    const std::string text = std::string(first) + (first == last ? "" : " to " + std::string(last));
    return kind == ServerKind::LlamaCpp ? "llama-cpp-python " + text : text;
  };
  if (match.releases.empty()) return "no " + server + " release checked (" + range(known.front(), known.back()) + ")";
  const std::string releases = range(match.releases.front(), match.releases.back());
  return kind == ServerKind::LlamaCpp ? server + " (" + releases + ")" : server + " " + releases;
}

std::string unpublished_text(const ReleaseMatch& match) {
  std::string out;
  for (std::string_view name : match.unpublished) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

}  // namespace inferscope
