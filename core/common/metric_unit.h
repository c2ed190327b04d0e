// The units metrics are kept in (seconds, fractions 0..1, bytes, counts) and how one value reads in
// each: the same text in the dashboard's hover, its axes, the Compare table and the command line.
// Sizes are binary (MiB, as the cache and the weights are allocated); rates of bytes are decimal
// (GB/s, as every datasheet and bandwidth tool states them).
#pragma once
#include <string>
#include <utility>

namespace inferscope {

enum class MetricUnit {
  Count,            // requests, steps, dispatches: "37"
  Tokens,           // a number of tokens: "37"
  Seconds,          // "12.3 ms", "250 µs", "1.50 s"
  Fraction,         // 0..1: "41.2 %"
  Bytes,            // "1.50 MiB"
  BytesPerSecond,   // "37.4 GB/s"
  TokensPerSecond,  // "96.4 tok/s"
  PerSecond,        // any other rate: "3.20 /s"
  Flops,            // "1.20 GFLOP"
  FlopsPerSecond,   // "12.3 GFLOP/s"
  FlopsPerByte,     // "0.52 FLOP/B"
};

// One exact value in `unit`, three significant figures (a whole count in full); "-" when not finite.
std::string format_metric(double value, MetricUnit unit);
// The unit's name in JSON ("count", "tokens", "s", "fraction", "bytes", "B/s", "tok/s", "/s", "FLOP",
// "FLOP/s", "FLOP/B").
const char* metric_unit_name(MetricUnit unit);
// Whether `unit` counts whole things (JSON writes its values as integers).
bool whole_unit(MetricUnit unit);

// `bytes` in the largest binary unit that keeps it at or above 1: the scaled value and the unit ("MiB").
std::pair<double, const char*> binary_scaled(double bytes);
// `v` with an SI prefix (k, M, G, T, P) that keeps it below 1000: the scaled value and the prefix.
std::pair<double, const char*> si_scaled(double v);

}  // namespace inferscope
