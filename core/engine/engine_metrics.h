// The engine's metrics in vLLM's names and units (seconds; every *_perc a fraction 0..1): per request
// (arrival, queue time, TTFT, every inter-token latency, e2e latency, token counts, finish reason,
// preemptions) and per step (running/waiting, tokens, KV stats). Bounded rings keep a long session's
// memory flat. Written by the engine thread, read by anyone through snapshot() (thread-safe).
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/engine/ring.h"
#include "core/engine/serving_histograms.h"
#include "core/engine/step_metrics.h"
#include "core/kv/kv_cache.h"
#include "core/model/device_memory.h"
#include "core/sched/request.h"

namespace inferscope {

// Speculative decoding in vLLM's names: a draft is one sequence's drafted tokens in one step.
struct SpecDecodeCounters {
  int64_t num_drafts = 0;           // spec_decode_num_drafts (drafts of at least one token)
  int64_t num_draft_tokens = 0;     // spec_decode_num_draft_tokens
  int64_t num_accepted_tokens = 0;  // spec_decode_num_accepted_tokens
  std::vector<int64_t> num_accepted_tokens_per_pos;  // [i]: drafts whose token i was accepted

  void add(int32_t drafted, int32_t accepted);
  double acceptance_rate() const;         // accepted / draft tokens (0 before any draft)
  double mean_acceptance_length() const;  // 1 + accepted / drafts: tokens per verify pass (1 before any draft)
};

struct RequestMetrics {
  RequestId id = 0;
  double arrival_s = 0;                      // seconds since the engine started
  double request_queue_time_seconds = -1;    // arrival to first scheduled (-1: not yet)
  double time_to_first_token_seconds = -1;   // arrival to first output token
  double e2e_request_latency_seconds = -1;   // arrival to finish
  std::vector<double> inter_token_latency_seconds;  // between consecutive output tokens (the first kMaxItl)
  int32_t prompt_tokens = 0;
  int32_t generation_tokens = 0;
  int32_t num_preemptions = 0;
  std::string finish_reason;                 // "stop" | "length" | "abort" | "error"; empty while running
  std::string client;                        // who asked (EngineRequest::client); "" for the front end's own
  SpecDecodeCounters spec;                   // its speculative steps
  double last_token_s = -1;
};

struct EngineMetricsSnapshot {
  double uptime_s = 0;
  int32_t num_requests_running = 0, num_requests_waiting = 0;
  int64_t num_preemptions = 0, num_steps = 0, requests_finished = 0;
  int64_t prompt_tokens_total = 0, generation_tokens_total = 0;
  int64_t prefix_cache_queries = 0, prefix_cache_hits = 0;  // over every admission (tokens)
  SpecDecodeCounters spec;               // over every speculative step
  std::string spec_mode = "none";        // the proposer in use
  ServingHistograms histograms;          // every request's latencies since the engine started
  std::map<std::string, int64_t> finished_by_reason;  // ended requests by finish reason ("stop", "length", ...)
  double attention_seconds_total = 0, matmul_seconds_total = 0;  // over every step
  // Over the steps in `steps` (the recent window): tokens computed / time spent in steps.
  double prefill_tokens_per_second = 0, decode_tokens_per_second = 0;
  KvStats kv;                            // as of the last step
  std::string weights_quant = "native";  // the quantization level the steps run on
  size_t weight_bytes = 0;               // bytes of its matrices (what a decode step streams)
  std::string converting_to;             // a level being converted to in the background ("" when none)
  double conversion_progress = 0;        // of that conversion, 0..1
  std::string device = "cpu";            // where the forward pass runs ("cpu", "cuda:N")
  std::string device_fallback;           // why it runs there when the device asked for failed ("" when not)
  std::optional<DeviceMemory> device_memory;  // what the forward pass holds on its device (none on the CPU)
  std::vector<StepMetrics> steps;        // the most recent steps, oldest first
  std::vector<RequestMetrics> requests;  // recently finished (oldest first), then in flight by id
  // Why the last poll of a remote source failed, naming the URL, and how often it is asked again
  // until it answers; "" while it answers (and for the local engine).
  std::string source_error;
  // Where the numbers come from: "" for the local engine, else the remote server ("llama.cpp at
  // http://127.0.0.1:8080"), whose /metrics may lack some quantities. Those are named here: a step
  // metric drawn as a line by its key (step_metrics.h: "kv_cache_usage_perc", "attention_seconds",
  // ...), any other panel by its plot's objectName ("ttft", "decode_tokens_per_second",
  // "tokens_per_step", "request_timeline", "roofline", "prefix_cache_hit_rate", "spec_acceptance",
  // "spec_decode"; gui/dashboard/not_reported.h), and "preemptions" (the time charts' marks, the
  // comparison's row) when the server counts none. A line not reported stays empty; a panel says so
  // when it, or every line of it, is not reported. Empty for the local engine, which reports everything.
  std::string source;
  std::vector<std::string> not_reported;
  // For a remote server: the releases whose /metrics names its scrape fits ("vLLM 0.9.2 to 0.11.0") and
  // the quantities it does not publish; how its decode throughput is measured when not from counters
  // moving as tokens are made ("its live token counters", "its live gauge", "counted at
  // request end, spread"). Empty for the local engine.
  std::string source_release, source_unpublished, throughput_basis;
};

// Every number of the snapshot itself (not of a step or a request), declared once beside it: its
// --metrics-json key and getter, its unit and what it measures. metrics_json walks this table; the
// snapshot's text fields, its device memory and its lists are written beside it.
struct SnapshotMetric {
  std::string key{};  // the --metrics-json key
  double (*value)(const EngineMetricsSnapshot&) = nullptr;
  // The inverse, for a snapshot read back from JSON (false when the value does not fit); nullptr for
  // a share derived from `kv`.
  bool (*set)(EngineMetricsSnapshot&, double) = nullptr;
  MetricUnit unit{};
  std::string help{};
};

// Every snapshot metric, in --metrics-json's order.
const std::vector<SnapshotMetric>& snapshot_metrics_table();

class EngineMetrics {
 public:
  static constexpr size_t kMaxItl = 4096;          // inter-token latencies kept per request
  static constexpr size_t kStepWindow = 1024;      // steps kept
  static constexpr size_t kFinishedWindow = 1024;  // finished requests kept

  void on_arrival(RequestId id, double t, int32_t prompt_tokens, const std::string& client = {});
  void on_scheduled(RequestId id, double t);  // no-op after the first time
  void on_token(RequestId id, double t);
  void on_finished(RequestId id, double t, const char* reason, int32_t num_preemptions);
  // A live request's token counts as its server reported them (usage), replacing those counted from
  // on_arrival and on_token (a remote stream's chunk may hold several tokens); totals follow.
  void on_usage(RequestId id, int32_t prompt_tokens, int32_t generation_tokens);
  void on_preempted(int64_t count);
  // One speculative step of request `id`: `drafted` tokens scored, `accepted` of them kept.
  void on_spec(RequestId id, int32_t drafted, int32_t accepted);
  void set_spec_mode(const std::string& mode);
  void on_step(const StepMetrics& step);
  void set_queue(int32_t running, int32_t waiting);
  // The cache's occupancy, after each step and when a request ends (it let go of its blocks).
  void set_kv(const KvStats& kv);
  void set_weights(const std::string& quant, size_t bytes);
  // A background conversion to `level` has come this far ("" level: none running). Any thread.
  void set_conversion(const std::string& level, double progress);
  void set_device(const std::string& device, const std::string& fallback, const std::optional<DeviceMemory>& memory);
  void set_device_memory(const std::optional<DeviceMemory>& memory);
  // Windows of SIZE_MAX keep everything (a finite workload's whole timeline).
  explicit EngineMetrics(size_t step_window = kStepWindow, size_t finished_window = kFinishedWindow)
      : finished_(finished_window), steps_(step_window) {}
  EngineMetricsSnapshot snapshot(double now) const;

 private:
  mutable std::mutex mu_;
  std::map<RequestId, RequestMetrics> live_;
  Ring<RequestMetrics> finished_;
  Ring<StepMetrics> steps_;
  EngineMetricsSnapshot totals_;  // counters and gauges; its vectors stay empty
};

// "cpu", "cuda:0", or after a device failure "cpu (fell back from cuda:0 after: cudaMemcpy failed ...)".
std::string device_line(const EngineMetricsSnapshot& s);
// The KV usage (0..1) the snapshot's source reports: the local cache's, or a remote server's newest
// interval; nullopt when the server does not report it.
std::optional<double> reported_kv_usage(const EngineMetricsSnapshot& s);
}  // namespace inferscope
