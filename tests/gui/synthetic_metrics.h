// A small, fully known engine metrics snapshot for the dashboard tests: two busy stretches of steps
// with an idle gap between them, and three requests (two with a first token, one still queued); and
// a run of two requests in which the engine preempts one and recomputes it.
#pragma once
#include "core/engine/engine_metrics.h"

namespace inferscope::gui::test {

inline constexpr int kFirstStretch = 10, kSecondStretch = 6;
// The steps' cost: FLOPs per token computed, weight bytes per step, K/V bytes per step index.
inline constexpr double kFlopsPerToken = 2e6, kWeightBytes = 1e6, kKvBytesPerIndex = 1000;

// Step i of a stretch starting at `t0`: 10 ms long; the first prefills 32 tokens (16 for each of
// requests 0 and 1), the rest decode 2 (one each). Its cost: kFlopsPerToken per token, kWeightBytes
// of weights and kKvBytesPerIndex x (i + 1) of K/V read.
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
  s.flops = kFlopsPerToken * (s.prefill_tokens + s.decode_tokens);
  s.weight_bytes_read = kWeightBytes;
  s.kv_bytes_read = kKvBytesPerIndex * (i + 1);
  for (RequestId id : {0, 1}) s.sequences.push_back({id, i == 0 ? 16 : 0, i == 0 ? 0 : 1});
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
  late.request_queue_time_seconds = 0.01, early.request_queue_time_seconds = 0.02;  // both scheduled at 1.0
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

// Two requests from 1.0 s, steps of 10 ms back to back (step k starts at 1.0 + 0.01 k):
//   request 0 (arrives 0.99): prefill in step 0, decodes in steps 1..8, finishes at 1.09;
//   request 1 (arrives 0.995): prefill in step 0, decodes in 1..3, preempted by step 4 (at 1.04),
//   waits through 4 and 5, recomputes its 16 prompt + 3 generated tokens in step 6, decodes in 7, 8.
inline constexpr int kPreemptionSteps = 9;
inline EngineMetricsSnapshot synthetic_preemption_snapshot() {
  EngineMetricsSnapshot snap;
  for (int k = 0; k < kPreemptionSteps; ++k) {
    StepMetrics s = synthetic_step(1.0, k);
    s.sequences = {{0, k == 0 ? 16 : 0, k == 0 ? 0 : 1}};
    if (k <= 3 || k >= 7) s.sequences.push_back({1, k == 0 ? 16 : 0, k == 0 ? 0 : 1});
    if (k == 6) s.sequences.push_back({1, 19, 0});
    if (k == 4) s.preempted = {1};
    s.prefill_tokens = s.decode_tokens = 0;
    for (const StepSequence& q : s.sequences) s.prefill_tokens += q.prefill_tokens, s.decode_tokens += q.decode_tokens;
    snap.steps.push_back(s);
  }
  snap.num_steps = kPreemptionSteps;
  snap.num_preemptions = 1;
  snap.uptime_s = 1.2;
  RequestMetrics r0, r1;
  r0.id = 0, r0.arrival_s = 0.99, r0.request_queue_time_seconds = 0.01, r0.time_to_first_token_seconds = 0.02;
  r0.e2e_request_latency_seconds = 0.10, r0.prompt_tokens = 16, r0.generation_tokens = 9, r0.finish_reason = "length";
  r1.id = 1, r1.arrival_s = 0.995, r1.request_queue_time_seconds = 0.005, r1.time_to_first_token_seconds = 0.015;
  r1.e2e_request_latency_seconds = 0.095, r1.prompt_tokens = 16, r1.generation_tokens = 6, r1.finish_reason = "length";
  r1.num_preemptions = 1;
  snap.requests = {r0, r1};
  return snap;
}

}  // namespace inferscope::gui::test
