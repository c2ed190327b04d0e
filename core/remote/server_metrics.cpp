#include "core/remote/server_metrics.h"

#include <array>
#include <charconv>
#include <stdexcept>
#include <string>

#include "core/remote/text_excerpt.h"

namespace inferscope {
namespace {

// The metric names one server uses for each quantity ("" when it has none).
struct MetricNames {
  const char* prompt_tokens;
  const char* generation_tokens;
  const char* steps;  // a counter, or a histogram whose _count is the number of iterations
  const char* preemptions;
  const char* prefix_cache_queries;
  const char* prefix_cache_hits;
  const char* spec_drafts;
  const char* spec_draft_tokens;
  const char* spec_accepted_tokens;
  const char* spec_accepted_per_position;  // a counter with a `position` label
  const char* requests_running;
  const char* requests_waiting;
  const char* kv_cache_usage;
  const char* prefix_cache_hit_rate;  // a gauge
  const char* spec_accept_rate;       // a gauge
  const char* spec_accept_length;     // a gauge
  std::array<const char*, kServerLatencies> latency;  // histograms, by ServerLatency
};

constexpr MetricNames kLlamaCpp = {"llamacpp:prompt_tokens_total", "llamacpp:tokens_predicted_total", "llamacpp:n_decode_total", "",
                                   "", "", "llamacpp:spec_decode_num_drafts_total", "llamacpp:spec_decode_num_draft_tokens_total",
                                   "llamacpp:spec_decode_num_accepted_tokens_total",
                                   "llamacpp:spec_decode_num_accepted_tokens_per_pos_total", "llamacpp:requests_processing",
                                   "llamacpp:requests_deferred", "", "", "", "", {"", "", "", ""}};
constexpr MetricNames kVllm = {"vllm:prompt_tokens_total", "vllm:generation_tokens_total", "vllm:iteration_tokens_total",
                               "vllm:num_preemptions_total", "vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total",
                               "vllm:spec_decode_num_drafts_total", "vllm:spec_decode_num_draft_tokens_total",
                               "vllm:spec_decode_num_accepted_tokens_total", "vllm:spec_decode_num_accepted_tokens_per_pos_total",
                               "vllm:num_requests_running",
                               "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc", "", "", "",
                               {"vllm:time_to_first_token_seconds", "vllm:inter_token_latency_seconds",
                                "vllm:e2e_request_latency_seconds", "vllm:request_queue_time_seconds"}};
constexpr MetricNames kSglang = {"sglang:prompt_tokens_total", "sglang:generation_tokens_total", "", "", "", "", "", "", "", "",
                                 "sglang:num_running_reqs", "sglang:num_queue_reqs", "sglang:token_usage", "sglang:cache_hit_rate",
                                 "sglang:spec_accept_rate", "sglang:spec_accept_length",
                                 {"sglang:time_to_first_token_seconds", "sglang:inter_token_latency_seconds",
                                  "sglang:e2e_request_latency_seconds", "sglang:queue_time_seconds"}};
// inferscope-cli serve: vLLM's names (core/server/prometheus_exposition.h), its steps its own.
constexpr MetricNames kInferscope = {"vllm:prompt_tokens_total", "vllm:generation_tokens_total", "inferscope:steps_total",
                                     "vllm:num_preemptions_total", "vllm:prefix_cache_queries_total",
                                     "vllm:prefix_cache_hits_total", "vllm:spec_decode_num_drafts_total",
                                     "vllm:spec_decode_num_draft_tokens_total", "vllm:spec_decode_num_accepted_tokens_total",
                                     "vllm:spec_decode_num_accepted_tokens_per_pos_total", "vllm:num_requests_running",
                                     "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc", "", "", "",
                                     {"vllm:time_to_first_token_seconds", "vllm:inter_token_latency_seconds",
                                      "vllm:e2e_request_latency_seconds", "vllm:request_queue_time_seconds"}};
constexpr MetricNames kNone = {"", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", {"", "", "", ""}};

const MetricNames& names_of(ServerKind kind) {
  switch (kind) {
    case ServerKind::LlamaCpp: return kLlamaCpp;
    case ServerKind::Vllm: return kVllm;
    case ServerKind::Sglang: return kSglang;
    case ServerKind::Inferscope: return kInferscope;
    case ServerKind::Unknown: break;
  }
  return kNone;
}

std::optional<double> total(const MetricSnapshot& m, const char* name) {
  if (*name == '\0') return std::nullopt;
  const MetricFamily* family = m.find(name);
  if (family == nullptr) return std::nullopt;
  // A histogram counts observations: one per iteration for vLLM's iteration_tokens_total.
  if (family->type == MetricType::Histogram) {
    const std::optional<HistogramSeries> h = m.histogram(name);
    return h ? std::optional(h->count) : std::nullopt;
  }
  return m.sum(name);
}

// A gauge's mean over its samples (engines); a histogram or summary is refused by sum().
std::optional<double> mean(const MetricSnapshot& m, const char* name) {
  const std::optional<double> sum = *name == '\0' ? std::nullopt : m.sum(name);
  if (!sum) return std::nullopt;
  return *sum / static_cast<double>(m.find(name)->samples.size());
}

// More than any speculative draft is long; a larger `position` is not one.
constexpr size_t kMaxDraftPositions = 1024;

// A counter's samples by their `position` label (0, 1, ...), summed over the other labels.
std::vector<double> by_position(const MetricSnapshot& m, const char* name) {
  std::vector<double> out;
  if (*name == '\0' || !m.sum(name)) return out;  // sum() refuses a histogram or summary
  for (const MetricSample& s : m.find(name)->samples) {
    const auto label = s.labels.find("position");
    if (label == s.labels.end()) continue;
    const std::string& text = label->second;
    size_t position = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), position);
    if (ec != std::errc() || end != text.data() + text.size() || position >= kMaxDraftPositions) {
      throw std::invalid_argument("metric " + std::string(name) + ": label position=\"" + text_excerpt(text) + "\" is not a draft position (0 to " +
                                  std::to_string(kMaxDraftPositions - 1) + ")");
    }
    if (out.size() <= position) out.resize(position + 1, 0.0);
    out[position] += s.value;
  }
  return out;
}

std::optional<double> increase(const std::optional<double>& earlier, const std::optional<double>& later) {
  if (!earlier || !later) return std::nullopt;
  return *later >= *earlier ? *later - *earlier : *later;
}

// Position by position; a position new in `later` counts from zero.
std::vector<double> positions_increase(const std::vector<double>& earlier, const std::vector<double>& later) {
  std::vector<double> out(later.size());
  for (size_t i = 0; i < later.size(); ++i) out[i] = *increase(i < earlier.size() ? earlier[i] : 0.0, later[i]);
  return out;
}

}  // namespace

ServerCounters read_counters(const MetricSnapshot& metrics, ServerKind kind) {
  const MetricNames& n = names_of(kind);
  return {total(metrics, n.prompt_tokens),        total(metrics, n.generation_tokens),    total(metrics, n.steps),
          total(metrics, n.preemptions),          total(metrics, n.prefix_cache_queries), total(metrics, n.prefix_cache_hits),
          total(metrics, n.spec_drafts),          total(metrics, n.spec_draft_tokens),    total(metrics, n.spec_accepted_tokens),
          by_position(metrics, n.spec_accepted_per_position)};
}

std::optional<HistogramSeries> read_latency_histogram(const MetricSnapshot& metrics, ServerKind kind, ServerLatency latency) {
  const char* name = names_of(kind).latency[static_cast<size_t>(latency)];
  return *name != '\0' && metrics.find(name) != nullptr ? metrics.histogram(name) : std::nullopt;
}

std::optional<ServerKvPool> read_kv_pool(const MetricSnapshot& metrics, ServerKind kind) {
  const MetricFamily* info = kind == ServerKind::Vllm ? metrics.find("vllm:cache_config_info") : nullptr;
  if (info == nullptr || info->samples.empty()) return std::nullopt;
  ServerKvPool pool;
  for (const MetricSample& s : info->samples) {
    const auto size = s.labels.find("block_size");
    const auto blocks = s.labels.find("num_gpu_blocks");
    if (size == s.labels.end() || blocks == s.labels.end()) return std::nullopt;
    try {
      pool.block_size = std::stoll(size->second);
      pool.blocks += std::stoll(blocks->second);
    } catch (const std::logic_error&) {  // "None" before the engine has sized its pool
      return std::nullopt;
    }
  }
  return pool;
}

ServerGauges read_gauges(const MetricSnapshot& metrics, ServerKind kind) {
  const MetricNames& n = names_of(kind);
  return {total(metrics, n.requests_running), total(metrics, n.requests_waiting), mean(metrics, n.kv_cache_usage),
          mean(metrics, n.prefix_cache_hit_rate), mean(metrics, n.spec_accept_rate), mean(metrics, n.spec_accept_length)};
}

ServerScrape read_server_scrape(const MetricSnapshot& metrics, ServerKind kind) {
  ServerScrape s{read_counters(metrics, kind), read_gauges(metrics, kind), {}, read_kv_pool(metrics, kind)};
  for (size_t i = 0; i < kServerLatencies; ++i) s.latency[i] = read_latency_histogram(metrics, kind, static_cast<ServerLatency>(i));
  return s;
}

ServerCounters counters_increase(const ServerCounters& a, const ServerCounters& b) {
  return {increase(a.prompt_tokens, b.prompt_tokens),
          increase(a.generation_tokens, b.generation_tokens),
          increase(a.steps, b.steps),
          increase(a.preemptions, b.preemptions),
          increase(a.prefix_cache_queries, b.prefix_cache_queries),
          increase(a.prefix_cache_hits, b.prefix_cache_hits),
          increase(a.spec_drafts, b.spec_drafts),
          increase(a.spec_draft_tokens, b.spec_draft_tokens),
          increase(a.spec_accepted_tokens, b.spec_accepted_tokens),
          positions_increase(a.spec_accepted_per_position, b.spec_accepted_per_position)};
}

}  // namespace inferscope
