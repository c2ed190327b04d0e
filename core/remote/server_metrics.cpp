#include "core/remote/server_metrics.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <stdexcept>
#include <string>

#include "core/remote/text_excerpt.h"

namespace inferscope {
namespace {

// A quantity's names on one server, newest first: a later one is an older release's name for the
// same quantity, read only where the newer is missing (unset entries are null).
using Names = std::array<const char*, 2>;

// The metric names one server uses for each quantity (none set when it has none).
struct MetricNames {
  Names prompt_tokens{}, generation_tokens{};
  Names steps{};  // a counter, or a histogram whose _count is the number of iterations
  Names preemptions{}, prefix_cache_queries{}, prefix_cache_hits{};
  Names spec_drafts{}, spec_draft_tokens{}, spec_accepted_tokens{};
  Names spec_accepted_per_position{};  // a counter with a `position` label
  Names requests_running{}, requests_waiting{}, kv_cache_usage{};
  Names prefix_cache_hit_rate{}, spec_accept_rate{}, spec_accept_length{};  // gauges
  std::array<Names, kServerLatencies> latency{};  // histograms, by ServerLatency
};

constexpr MetricNames kLlamaCpp = {
    .prompt_tokens = {"llamacpp:prompt_tokens_total"},
    .generation_tokens = {"llamacpp:tokens_predicted_total"},
    .steps = {"llamacpp:n_decode_total"},
    .spec_drafts = {"llamacpp:spec_decode_num_drafts_total"},
    .spec_draft_tokens = {"llamacpp:spec_decode_num_draft_tokens_total"},
    .spec_accepted_tokens = {"llamacpp:spec_decode_num_accepted_tokens_total"},
    .spec_accepted_per_position = {"llamacpp:spec_decode_num_accepted_tokens_per_pos_total"},
    .requests_running = {"llamacpp:requests_processing"},
    .requests_waiting = {"llamacpp:requests_deferred"}};
// vLLM before 0.9.2: gpu_cache_usage_perc and gpu_prefix_cache_*; before 0.10.2: time_per_output_token_seconds.
constexpr MetricNames kVllm = {
    .prompt_tokens = {"vllm:prompt_tokens_total"},
    .generation_tokens = {"vllm:generation_tokens_total"},
    .steps = {"vllm:iteration_tokens_total"},
    .preemptions = {"vllm:num_preemptions_total"},
    .prefix_cache_queries = {"vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total"},
    .prefix_cache_hits = {"vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"},
    .spec_drafts = {"vllm:spec_decode_num_drafts_total"},
    .spec_draft_tokens = {"vllm:spec_decode_num_draft_tokens_total"},
    .spec_accepted_tokens = {"vllm:spec_decode_num_accepted_tokens_total"},
    .spec_accepted_per_position = {"vllm:spec_decode_num_accepted_tokens_per_pos_total"},
    .requests_running = {"vllm:num_requests_running"},
    .requests_waiting = {"vllm:num_requests_waiting"},
    .kv_cache_usage = {"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"},
    .latency = {{{"vllm:time_to_first_token_seconds"},
                 {"vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"},
                 {"vllm:e2e_request_latency_seconds"},
                 {"vllm:request_queue_time_seconds"}}}};
constexpr MetricNames kSglang = {
    .prompt_tokens = {"sglang:prompt_tokens_total"},
    .generation_tokens = {"sglang:generation_tokens_total"},
    .requests_running = {"sglang:num_running_reqs"},
    .requests_waiting = {"sglang:num_queue_reqs"},
    .kv_cache_usage = {"sglang:token_usage"},
    .prefix_cache_hit_rate = {"sglang:cache_hit_rate"},
    .spec_accept_rate = {"sglang:spec_accept_rate"},
    .spec_accept_length = {"sglang:spec_accept_length"},
    .latency = {{{"sglang:time_to_first_token_seconds"},
                 {"sglang:inter_token_latency_seconds"},
                 {"sglang:e2e_request_latency_seconds"},
                 {"sglang:queue_time_seconds"}}}};
// inferscope-cli serve: vLLM's names (core/server/prometheus_exposition.h), its steps its own.
constexpr MetricNames inferscope_names() {
  MetricNames n = kVllm;
  n.steps = {"inferscope:steps_total"};
  return n;
}
constexpr MetricNames kInferscope = inferscope_names();
constexpr MetricNames kNone = {};

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

// The first of `names` that the scrape holds, or null.
const char* present(const MetricSnapshot& m, const Names& names) {
  for (const char* name : names) {
    if (name != nullptr && m.find(name) != nullptr) return name;
  }
  return nullptr;
}

// The labels that tell apart the ranks of one engine (SGLang's pipeline, tensor and expert parallelism):
// each rank writes its own copy of that engine's gauges.
bool rank_label(const std::string& label) { return label == "tp_rank" || label == "pp_rank" || label == "moe_ep_rank"; }

// A queue gauge counted once per engine and summed over engines: SGLang's total under priority=""
// stands for its per-priority parts, and an engine's ranks' copies count once (the largest).
std::optional<double> engine_total(const MetricSnapshot& m, const Names& names) {
  const char* name = present(m, names);
  if (name == nullptr || !m.sum(name)) return std::nullopt;  // sum() refuses a histogram or summary
  const std::vector<MetricSample>& samples = m.find(name)->samples;
  const bool has_total = std::any_of(samples.begin(), samples.end(), [](const MetricSample& s) {
    const auto p = s.labels.find("priority");
    return p != s.labels.end() && p->second.empty();
  });
  std::map<Labels, double> engines;
  for (const MetricSample& s : samples) {
    const auto p = s.labels.find("priority");
    if (has_total && p != s.labels.end() && !p->second.empty()) continue;  // a part of the total
    Labels engine;
    for (const auto& [key, value] : s.labels)
      if (!rank_label(key)) engine.emplace(key, value);
    const auto [it, first] = engines.emplace(std::move(engine), s.value);
    if (!first) it->second = std::max(it->second, s.value);
  }
  double sum = 0;
  for (const auto& [engine, value] : engines) sum += value;
  return sum;
}

std::optional<double> total(const MetricSnapshot& m, const Names& names) {
  const char* name = present(m, names);
  if (name == nullptr) return std::nullopt;
  const MetricFamily* family = m.find(name);
  // A histogram counts observations: one per iteration for vLLM's iteration_tokens_total.
  if (family->type == MetricType::Histogram) {
    const std::optional<HistogramSeries> h = m.histogram(name);
    return h ? std::optional(h->count) : std::nullopt;
  }
  return m.sum(name);
}

// A gauge's mean over its samples (engines); a histogram or summary is refused by sum().
std::optional<double> mean(const MetricSnapshot& m, const Names& names) {
  const char* name = present(m, names);
  const std::optional<double> sum = name == nullptr ? std::nullopt : m.sum(name);
  if (!sum) return std::nullopt;
  return *sum / static_cast<double>(m.find(name)->samples.size());
}

// More than any speculative draft is long; a larger `position` is not one.
constexpr size_t kMaxDraftPositions = 1024;

// A counter's samples by their `position` label (0, 1, ...), summed over the other labels.
std::vector<double> by_position(const MetricSnapshot& m, const Names& names) {
  std::vector<double> out;
  const char* name = present(m, names);
  if (name == nullptr || !m.sum(name)) return out;  // sum() refuses a histogram or summary
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
  const char* name = present(metrics, names_of(kind).latency[static_cast<size_t>(latency)]);
  return name != nullptr ? metrics.histogram(name) : std::nullopt;
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
  return {engine_total(metrics, n.requests_running), engine_total(metrics, n.requests_waiting), mean(metrics, n.kv_cache_usage),
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
