// libFuzzer target for a server's /metrics scrapes, end to end (core/remote): the Prometheus text
// parser (std::runtime_error naming the line), the snapshot's scrape-to-scrape arithmetic, and each
// server's mapping onto the workbench's figures (server_metrics.h: std::invalid_argument naming the
// metric of the wrong type or label), folded scrape after scrape as the remote engine's poller folds
// them (scrape_history.h) into dashboard steps, latency percentiles and totals, down to the snapshot
// the dashboard draws. A form feed splits the input into successive scrapes.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/remote/histogram_math.h"
#include "core/remote/metric_snapshot.h"
#include "core/remote/scrape_history.h"
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

// What the workbench shows of successive scrapes of a server of this kind, half a second apart: a
// scrape the mapping refuses is skipped, as the poller skips it.
void server_figures(const std::vector<MetricSnapshot>& scrapes, ServerKind kind) {
  EngineMetrics metrics;
  ScrapeHistory history(1.0);
  double t = 0;
  for (const MetricSnapshot& scrape : scrapes) {
    t += 0.5;
    try {
      history.take(read_server_scrape(scrape, kind), t, metrics);
    } catch (const std::invalid_argument&) {
    }
  }
  EngineMetricsSnapshot snapshot = metrics.snapshot(t);
  history.complete(snapshot);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(fuzz::text_of(data, size));
  std::vector<MetricSnapshot> scrapes;
  for (size_t begin = 0; begin <= input.size();) {
    const size_t end = std::min(input.find('\f', begin), input.size());
    try {
      scrapes.push_back(MetricSnapshot::parse(input.substr(begin, end - begin)));
      scrape_arithmetic(scrapes.back());
    } catch (const std::runtime_error&) {  // a scrape that is not Prometheus text: the poller skips it too
    }
    begin = end + 1;
  }
  for (const ServerKind kind : {ServerKind::LlamaCpp, ServerKind::Vllm, ServerKind::Sglang}) server_figures(scrapes, kind);
  return 0;
}
