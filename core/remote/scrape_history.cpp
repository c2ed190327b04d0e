#include "core/remote/scrape_history.h"

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

void ScrapeHistory::take(const ServerScrape& scrape, double t, EngineMetrics& metrics) {
  const ServerCounters& counters = scrape.counters;
  const ServerGauges& gauges = scrape.gauges;
  if (latest_counters_) {
    // The interval since the last scrape, as one dashboard step.
    StepMetrics step = server_step(gauges, counters_increase(*latest_counters_, counters), t, t - last_scrape_s_);
    add_latency_percentiles(scrape, t, step);
    metrics.on_step(step);
  } else {
    baseline_ = counters;
  }
  metrics.set_queue(whole_count<int32_t>(gauges.requests_running.value_or(0)), whole_count<int32_t>(gauges.requests_waiting.value_or(0)));
  latest_counters_ = counters;
  latest_gauges_ = gauges;
  kv_pool_ = scrape.kv_pool;
  last_scrape_s_ = t;
}

void ScrapeHistory::complete(EngineMetricsSnapshot& s) const {
  s.not_reported = server_not_reported(latest_gauges_.value_or(ServerGauges{}), latest_counters_.value_or(ServerCounters{}));
  if (latest_gauges_ && latest_counters_ && server_speculates(*latest_gauges_, *latest_counters_)) s.spec_mode = "server";
  // Totals since connecting, as the server counts them where it does.
  if (baseline_ && latest_counters_) add_server_totals(s, counters_increase(*baseline_, *latest_counters_));
  s.weights_quant = "server";
}

}  // namespace inferscope
