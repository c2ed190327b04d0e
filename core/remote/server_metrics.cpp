#include "core/remote/server_metrics.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <stdexcept>
#include <string>

#include "core/remote/histogram_math.h"
#include "core/remote/server_metric_table.h"
#include "core/remote/text_excerpt.h"

namespace inferscope {
namespace {

using Names = std::vector<std::string_view>;

// Whether a family writes a copy per API server process (prometheus_client's multiprocess mode "all":
// a `pid` label), some of them stale.
bool per_process(const MetricFamily& family) {
  return std::any_of(family.samples.begin(), family.samples.end(), [](const MetricSample& s) { return s.labels.contains("pid"); });
}

// The first of `names` that the scrape holds, or empty; an older name written once (vLLM 0.9.2-0.10.2's
// gpu_cache_usage_perc) before a newer one written per process (their kv_cache_usage_perc).
std::string_view present(const MetricSnapshot& m, const Names& names) {
  std::string_view first;
  for (std::string_view name : names) {
    const MetricFamily* family = m.find(name);
    if (family == nullptr) continue;
    if (!per_process(*family)) return name;
    if (first.empty()) first = name;
  }
  return first;
}

// Labels that tell apart copies of one engine's numbers: its ranks' (SGLang's pipeline, tensor and
// expert parallelism, each writing the engine's gauges) and its API server processes' (vLLM's gauges
// in prometheus_client's multiprocess mode "all", one sample per pid).
bool copy_label(const std::string& label) {
  return label == "tp_rank" || label == "pp_rank" || label == "moe_ep_rank" || label == "pid";
}

// The labels of `labels` that tell engines apart (copy_label's dropped).
Labels engine_of(const Labels& labels) {
  Labels engine;
  for (const auto& [key, value] : labels)
    if (!copy_label(key)) engine.emplace(key, value);
  return engine;
}

// A counter's or gauge's samples, each engine's once: SGLang's total under priority="" stands for its
// per-priority parts, and copies of one engine's number (copy_label) count once, the largest. Keyed by
// the labels left (engine, model, data-parallel rank, is_streaming, position, ...). Empty when the
// scrape lacks every name; sum() refuses a histogram or summary.
std::map<Labels, double> engine_samples(const MetricSnapshot& m, const Names& names) {
  std::map<Labels, double> engines;
  const std::string_view name = present(m, names);
  if (name.empty() || !m.sum(name)) return engines;
  const std::vector<MetricSample>& samples = m.find(name)->samples;
  const auto priority_total = [](const MetricSample& s) {
    const auto p = s.labels.find("priority");
    return p != s.labels.end() && p->second.empty();
  };
  const bool has_total = std::any_of(samples.begin(), samples.end(), priority_total);
  for (const MetricSample& s : samples) {
    if (has_total && s.labels.contains("priority") && !priority_total(s)) continue;  // a part of the total
    const auto [it, first] = engines.emplace(engine_of(s.labels), s.value);
    if (!first) it->second = std::max(it->second, s.value);
  }
  return engines;
}

// A histogram summed over engines, each once: SGLang's scheduler ranks each write a copy of their
// engine's queue_time_seconds; the copy that counted most stands for the engine.
std::optional<HistogramSeries> engine_histogram(const MetricSnapshot& m, std::string_view name) {
  if (!m.histogram(name)) return std::nullopt;  // throws for a family that is not a histogram
  std::map<Labels, const HistogramSeries*> engines;
  for (const HistogramSeries& h : m.find(name)->histograms) {
    const auto [it, first] = engines.emplace(engine_of(h.labels), &h);
    if (!first && h.count > it->second->count) it->second = &h;
  }
  std::optional<HistogramSeries> total;
  for (const auto& [engine, h] : engines) total = total ? add_histograms(*total, *h) : *h;
  return total;
}

double sum_of(const std::map<Labels, double>& engines) {
  double sum = 0;
  for (const auto& [engine, value] : engines) sum += value;
  return sum;
}

// A counter or queue gauge summed over engines, each once.
std::optional<double> engine_total(const MetricSnapshot& m, const Names& names) {
  const std::map<Labels, double> engines = engine_samples(m, names);
  return engines.empty() ? std::nullopt : std::optional(sum_of(engines));
}

// A gauge of each engine's own state (usage, rates) averaged over engines, each once.
std::optional<double> engine_mean(const MetricSnapshot& m, const Names& names) {
  const std::map<Labels, double> engines = engine_samples(m, names);
  return engines.empty() ? std::nullopt : std::optional(sum_of(engines) / static_cast<double>(engines.size()));
}

// A counter summed over engines, each once; a histogram's count of observations (one per iteration
// for vLLM's iteration_tokens_total).
std::optional<double> total(const MetricSnapshot& m, const Names& names) {
  const std::string_view name = present(m, names);
  if (name.empty()) return std::nullopt;
  const MetricFamily* family = m.find(name);
  if (family->type == MetricType::Histogram) {
    const std::optional<HistogramSeries> h = engine_histogram(m, name);
    return h ? std::optional(h->count) : std::nullopt;
  }
  return engine_total(m, names);
}

// A counter's samples whose `mode` label is `mode`, summed over engines, each once.
std::optional<double> by_mode(const MetricSnapshot& m, const Names& names, std::string_view mode) {
  std::optional<double> sum;
  for (const auto& [labels, value] : engine_samples(m, names)) {
    const auto label = labels.find("mode");
    if (label != labels.end() && label->second == mode) sum = sum.value_or(0) + value;
  }
  return sum;
}

// More than any speculative draft is long; a larger `position` is not one.
constexpr size_t kMaxDraftPositions = 1024;

// A counter's samples by their `position` label (0, 1, ...), summed over the other labels, each
// engine once.
std::vector<double> by_position(const MetricSnapshot& m, const Names& names) {
  std::vector<double> out;
  for (const auto& [labels, value] : engine_samples(m, names)) {
    const auto label = labels.find("position");
    if (label == labels.end()) continue;
    const std::string& text = label->second;
    size_t position = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), position);
    if (ec != std::errc() || end != text.data() + text.size() || position >= kMaxDraftPositions) {
      throw std::invalid_argument("metric " + std::string(present(m, names)) + ": label position=\"" + text_excerpt(text) + "\" is not a draft position (0 to " +
                                  std::to_string(kMaxDraftPositions - 1) + ")");
    }
    if (out.size() <= position) out.resize(position + 1, 0.0);
    out[position] += value;
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
  const auto counter = [&](ServerQuantity q) { return total(metrics, metric_names(kind, q)); };
  using enum ServerQuantity;
  return {counter(PromptTokens),
          counter(PromptTokensCached),
          counter(GenerationTokens),
          counter(GenerationSeconds),
          by_mode(metrics, metric_names(kind, LiveTokens), "prefill_compute"),
          by_mode(metrics, metric_names(kind, LiveTokens), "prefill_cache"),
          by_mode(metrics, metric_names(kind, LiveTokens), "decode"),
          counter(Steps),
          counter(Preemptions),
          counter(PrefixCacheQueries),
          counter(PrefixCacheHits),
          counter(SpecDrafts),
          counter(SpecDraftTokens),
          counter(SpecAcceptedTokens),
          by_position(metrics, metric_names(kind, SpecAcceptedPerPosition))};
}

std::optional<HistogramSeries> read_latency_histogram(const MetricSnapshot& metrics, ServerKind kind, ServerLatency latency) {
  const auto q = static_cast<ServerQuantity>(static_cast<size_t>(ServerQuantity::Ttft) + static_cast<size_t>(latency));
  const std::string_view name = present(metrics, metric_names(kind, q));
  return name.empty() ? std::nullopt : engine_histogram(metrics, name);
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
  const auto sum = [&](ServerQuantity q) { return engine_total(metrics, metric_names(kind, q)); };
  const auto mean = [&](ServerQuantity q) { return engine_mean(metrics, metric_names(kind, q)); };
  using enum ServerQuantity;
  return {sum(RequestsRunning),    sum(RequestsWaiting),  mean(KvCacheUsage),  mean(PrefixCacheHitRate),
          mean(SpecAcceptRate),    mean(SpecAcceptLength), sum(GenThroughput)};
}

ServerScrape read_server_scrape(const MetricSnapshot& metrics, ServerKind kind) {
  ServerScrape s;
  s.counters = read_counters(metrics, kind);
  s.gauges = read_gauges(metrics, kind);
  s.kv_pool = read_kv_pool(metrics, kind);
  s.generation_at_request_end = counted_at_request_end(kind, present(metrics, metric_names(kind, ServerQuantity::GenerationTokens)));
  s.prompt_includes_cached = prompt_tokens_include_cached(kind);
  const ReleaseMatch match = match_release(metrics, kind);
  s.release_range = release_range_text(kind, match);
  s.unpublished = unpublished_text(match);
  for (size_t i = 0; i < kServerLatencies; ++i) s.latency[i] = read_latency_histogram(metrics, kind, static_cast<ServerLatency>(i));
  return s;
}

ServerCounters counters_increase(const ServerCounters& a, const ServerCounters& b) {
  return {increase(a.prompt_tokens, b.prompt_tokens),
          increase(a.prompt_tokens_cached, b.prompt_tokens_cached),
          increase(a.generation_tokens, b.generation_tokens),
          increase(a.generation_seconds, b.generation_seconds),
          increase(a.live_prompt_computed, b.live_prompt_computed),
          increase(a.live_prompt_cached, b.live_prompt_cached),
          increase(a.live_generated, b.live_generated),
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
