#include "core/remote/scrape_history.h"

#include <algorithm>

#include "core/remote/histogram_math.h"
#include "core/remote/server_report.h"

namespace inferscope {

void ScrapeHistory::add_latency_percentiles(const ServerScrape& scrape, double t, StepMetrics& step) {
  for (size_t i = 0; i < kServerLatencies; ++i) {
    const std::optional<HistogramSeries>& now = scrape.latency[i];
    if (!now) continue;
    auto& history = latency_history_[i];
    history.emplace_back(t, *now);
    // The oldest scrape kept is the last one at least a window old: the increase spans the window.
    while (history.size() > 2 && history[1].first <= t - latency_window_s_) history.pop_front();
    if (history.size() < 2) continue;
    try {
      const HistogramSeries window = histogram_increase(history.front().second, *now);
      if (window.count <= 0) continue;
      step.server_latency[i] = {histogram_quantile(0.5, window), histogram_quantile(0.99, window)};
    } catch (const std::invalid_argument&) {  // the server changed its bucket bounds (a restart): start again
      history.erase(history.begin(), history.end() - 1);
    }
  }
}

double ScrapeHistory::generated_tokens(const ServerScrape& scrape, const ServerCounters& increase, double seconds) {
  if (increase.live_generated) {
    throughput_basis_ = "its live token counters";
    return *increase.live_generated;
  }
  if (scrape.gauges.gen_throughput) {
    throughput_basis_ = "its live gauge";
    return *scrape.gauges.gen_throughput * seconds;
  }
  if (scrape.generation_at_request_end) {
    throughput_basis_ = "counted at request end, spread";
    generation_spread_.add(increase.generation_tokens.value_or(0), increase.generation_seconds.value_or(0));
    return generation_spread_.take(seconds);
  }
  throughput_basis_.clear();
  return increase.generation_tokens.value_or(0);
}

void ScrapeHistory::take(const ServerScrape& scrape, double t, EngineMetrics& metrics) {
  const ServerCounters& counters = scrape.counters;
  const ServerGauges& gauges = scrape.gauges;
  if (latest_counters_) {
    // The interval since the last scrape, as one dashboard step.
    const ServerCounters increase = counters_increase(*latest_counters_, counters);
    StepMetrics step = server_step(gauges, increase, t, t - last_scrape_s_);
    step.decode_tokens = whole_count<int32_t>(generated_tokens(scrape, increase, t - last_scrape_s_));
    // Prompt tokens found in a cache apart from those computed: as they are computed where the server
    // counts so, else from its prompt counters, whichever of the two its prompt counter holds.
    const double cached = increase.live_prompt_cached.value_or(increase.prompt_tokens_cached.value_or(increase.prefix_cache_hits.value_or(0)));
    const double prompt = increase.prompt_tokens.value_or(0);
    const double computed = scrape.prompt_includes_cached ? std::max(prompt - cached, 0.0) : prompt;
    step.prefix_cache_hits = whole_count<int32_t>(cached);
    step.prefill_tokens = whole_count<int32_t>(increase.live_prompt_computed.value_or(computed));
    add_latency_percentiles(scrape, t, step);
    metrics.on_step(step);
  } else {
    baseline_ = counters;
  }
  metrics.set_queue(whole_count<int32_t>(gauges.requests_running.value_or(0)), whole_count<int32_t>(gauges.requests_waiting.value_or(0)));
  latest_counters_ = counters;
  latest_gauges_ = gauges;
  kv_pool_ = scrape.kv_pool;
  release_range_ = scrape.release_range;
  unpublished_ = scrape.unpublished;
  last_scrape_s_ = t;
}

void ScrapeHistory::complete(EngineMetricsSnapshot& s) const {
  s.not_reported = server_not_reported(latest_gauges_.value_or(ServerGauges{}), latest_counters_.value_or(ServerCounters{}));
  if (latest_gauges_ && latest_counters_ && server_speculates(*latest_gauges_, *latest_counters_)) s.spec_mode = "server";
  // Totals since connecting, as the server counts them where it does.
  if (baseline_ && latest_counters_) add_server_totals(s, counters_increase(*baseline_, *latest_counters_));
  s.weights_quant = "server";
  s.throughput_basis = throughput_basis_;
  s.source_release = release_range_;
  s.source_unpublished = unpublished_;
}

}  // namespace inferscope
