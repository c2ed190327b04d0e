// The engine's metrics as a Prometheus scrape (text format 0.0.4) under vLLM's names, types and
// buckets, each series labelled model_name, so that dashboards made for vLLM read inferscope-cli serve
// unchanged: the queue gauges, KV usage, token, preemption, prefix-cache, finished-request and
// speculative counters, and the latency histograms. What vLLM does not export is under inferscope:
// (KV fragmentation and reserved-but-unused, blocks by state, attention and matmul seconds).
#pragma once
#include <string>

#include "core/engine/engine_metrics.h"

namespace inferscope {

std::string prometheus_text(const EngineMetricsSnapshot& s, const std::string& model_name);

}  // namespace inferscope
