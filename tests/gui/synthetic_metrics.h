// A small, fully known engine metrics snapshot for the dashboard tests: two busy stretches of steps
// with an idle gap between them, and three requests (two with a first token, one still queued).
#pragma once
#include "core/engine/engine_metrics.h"

namespace inferscope::gui::test {

inline constexpr int kFirstStretch = 10, kSecondStretch = 6;

// Step i of a stretch starting at `t0`: 10 ms long; the first prefills 32 tokens, the rest decode 2.
inline StepMetrics synthetic_step(double t0, int i) {
  StepMetrics s;
  s.duration_s = 0.010;
  s.time_s = t0 + 0.010 * (i + 1);
  s.num_requests_running = 2;
  s.prefill_tokens = i == 0 ? 32 : 0;
  s.decode_tokens = i == 0 ? 0 : 2;
  s.kv_cache_usage_perc = 0.05 + 0.01 * i;
  s.kv_internal_fragmentation_perc = 0.2;
  s.kv_reserved_unused_perc = 0;
  s.attention_scratch_bytes = 4096 * static_cast<size_t>(i + 1);
  s.attention_seconds = 0.002;
  return s;
}

inline EngineMetricsSnapshot synthetic_snapshot() {
  EngineMetricsSnapshot snap;
  for (int i = 0; i < kFirstStretch; ++i) snap.steps.push_back(synthetic_step(1.0, i));
  for (int i = 0; i < kSecondStretch; ++i) snap.steps.push_back(synthetic_step(3.0, i));  // after ~1.9 s idle
  snap.num_steps = kFirstStretch + kSecondStretch;
  snap.uptime_s = 3.2;
  RequestMetrics late, early, queued;
  late.id = 1, late.arrival_s = 0.99, late.time_to_first_token_seconds = 0.05;   // first token at 1.04
  early.id = 0, early.arrival_s = 0.98, early.time_to_first_token_seconds = 0.03;  // first token at 1.01
  queued.id = 2, queued.arrival_s = 3.1;
  snap.requests = {late, early, queued};  // deliberately not in first-token order
  snap.generation_tokens_total = 2 * (kFirstStretch + kSecondStretch - 2);
  snap.kv.prefix_cache_queries = 64;
  snap.kv.prefix_cache_hits = 16;
  return snap;
}

// The same steps speculating (ngram, k = 4): every decode step drafts 4 tokens and accepts 3 and 1
// in turn, proposing in 2 ms and verifying in 8 ms; 10 drafts accepted 8, 5, 2, 1 times at positions 1..4.
inline EngineMetricsSnapshot synthetic_spec_snapshot() {
  EngineMetricsSnapshot snap = synthetic_snapshot();
  snap.spec_mode = "ngram";
  int decode = 0;
  for (StepMetrics& s : snap.steps) {
    if (s.decode_tokens == 0) continue;
    s.spec_draft_tokens = 4;
    s.spec_accepted_tokens = decode++ % 2 == 0 ? 3 : 1;
    s.draft_seconds = 0.002;
    s.verify_seconds = 0.008;
  }
  snap.spec.num_drafts = 10;
  snap.spec.num_draft_tokens = 40;
  snap.spec.num_accepted_tokens = 16;
  snap.spec.num_accepted_tokens_per_pos = {8, 5, 2, 1};
  return snap;
}

}  // namespace inferscope::gui::test
