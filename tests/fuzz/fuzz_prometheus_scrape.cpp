// libFuzzer target for a server's /metrics scrape, end to end (core/remote): the Prometheus text
// parser (std::runtime_error naming the line), the snapshot's scrape-to-scrape arithmetic, and each
// server's mapping onto the workbench's figures (server_metrics.h: std::invalid_argument naming the
// metric of the wrong type or label), down to a dashboard step and the totals (server_report.h).
#include <cstdint>
#include <optional>
#include <stdexcept>

#include "core/remote/histogram_math.h"
#include "core/remote/metric_snapshot.h"
#include "core/remote/server_metrics.h"
#include "core/remote/server_report.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

using namespace inferscope;

// The snapshot against itself, family by family, as a rate or a histogram's increase and quantile.
void scrape_arithmetic(const MetricSnapshot& scrape) {
  for (const MetricFamily& family : scrape.families()) {
    try {
      if (family.type == MetricType::Histogram) {
        const std::optional<HistogramSeries> increase = histogram_increase(scrape, scrape, family.name);
        if (increase) (void)histogram_quantile(0.99, *increase);
      } else {
        (void)counter_rate(scrape, 0, scrape, 1, family.name);
      }
    } catch (const std::invalid_argument&) {  // a summary, or histogram series whose bounds differ
    }
  }
}

// What the workbench shows of a scrape of a server of this kind: a dashboard step and the totals.
void server_figures(const MetricSnapshot& scrape, ServerKind kind) {
  try {
    const ServerScrape s = read_server_scrape(scrape, kind);
    for (const std::optional<HistogramSeries>& h : s.latency) {
      if (h) (void)histogram_quantile(0.5, *h);
    }
    const ServerCounters increase = counters_increase(ServerCounters{}, s.counters);
    (void)server_step(s.gauges, increase, 1, 1);
    EngineMetricsSnapshot totals;
    add_server_totals(totals, increase);
    (void)server_not_reported(s.gauges, s.counters);
  } catch (const std::invalid_argument&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::optional<MetricSnapshot> scrape;
  try {
    scrape = MetricSnapshot::parse(fuzz::text_of(data, size));
  } catch (const std::runtime_error&) {
    return 0;
  }
  scrape_arithmetic(*scrape);
  for (const ServerKind kind : {ServerKind::LlamaCpp, ServerKind::Vllm, ServerKind::Sglang}) server_figures(*scrape, kind);
  return 0;
}
