#include "core/server/prometheus_exposition.h"

#include <charconv>
#include <cmath>
#include <utility>
#include <vector>

namespace inferscope {
namespace {

// A label value with \, " and newlines escaped.
std::string escaped(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    out += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return out;
}

// A sample value as Prometheus reads it: the shortest text that reads back as the same double
// (0.02, not 0.0200000000000000004), +Inf, NaN.
std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[32];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

class Exposition {
 public:
  explicit Exposition(const std::string& model_name) : model_("model_name=\"" + escaped(model_name) + "\"") {}

  // One family: its HELP and TYPE, then each (extra labels, value).
  void family(const std::string& name, const char* type, const std::string& help,
              const std::vector<std::pair<std::string, double>>& samples) {
    header(name, type, help);
    for (const auto& [labels, value] : samples) sample(name, labels, value);
  }
  void gauge(const std::string& name, const std::string& help, double v) { family(name, "gauge", help, {{"", v}}); }
  void counter(const std::string& name, const std::string& help, double v) { family(name, "counter", help, {{"", v}}); }

  void histogram(const std::string& name, const std::string& help, const Histogram& h) {
    header(name, "histogram", help);
    uint64_t below = 0;
    for (size_t i = 0; i < h.bounds.size(); ++i) {
      below += h.counts[i];
      sample(name + "_bucket", "le=\"" + number(h.bounds[i]) + "\"", static_cast<double>(below));
    }
    sample(name + "_bucket", "le=\"+Inf\"", static_cast<double>(h.count));
    sample(name + "_sum", "", h.sum);
    sample(name + "_count", "", static_cast<double>(h.count));
  }

  std::string text() const { return out_; }

 private:
  void header(const std::string& name, const char* type, const std::string& help) {
    out_ += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  }
  void sample(const std::string& name, const std::string& labels, double v) {
    out_ += name + "{" + model_ + (labels.empty() ? "" : "," + labels) + "} " + number(v) + "\n";
  }

  std::string model_;
  std::string out_;
};

}  // namespace

std::string prometheus_text(const EngineMetricsSnapshot& s, const std::string& model_name) {
  Exposition e(model_name);
  e.gauge("vllm:num_requests_running", "Number of requests in model execution batches.", s.num_requests_running);
  e.gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", s.num_requests_waiting);
  e.gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", s.kv.kv_cache_usage_perc());
  e.counter("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.",
            static_cast<double>(s.prefix_cache_queries));
  e.counter("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.",
            static_cast<double>(s.prefix_cache_hits));
  e.counter("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.", static_cast<double>(s.num_preemptions));
  e.counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.", static_cast<double>(s.prompt_tokens_total));
  e.counter("vllm:generation_tokens_total", "Number of generation tokens processed.", static_cast<double>(s.generation_tokens_total));
  std::vector<std::pair<std::string, double>> finished;
  for (const char* reason : {"stop", "length", "abort", "error"}) {
    const auto it = s.finished_by_reason.find(reason);
    finished.emplace_back(std::string("finished_reason=\"") + reason + "\"", it == s.finished_by_reason.end() ? 0.0 : static_cast<double>(it->second));
  }
  e.family("vllm:request_success_total", "counter", "Count of successfully processed requests.", finished);

  const ServingHistograms& h = s.histograms;
  e.histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", h.time_to_first_token);
  e.histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", h.inter_token_latency);
  e.histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", h.e2e_request_latency);
  e.histogram("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", h.request_queue_time);
  e.histogram("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", h.request_prefill_time);
  e.histogram("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", h.request_decode_time);

  e.counter("vllm:spec_decode_num_drafts_total", "Number of spec decoding drafts.", static_cast<double>(s.spec.num_drafts));
  e.counter("vllm:spec_decode_num_draft_tokens_total", "Number of draft tokens.", static_cast<double>(s.spec.num_draft_tokens));
  e.counter("vllm:spec_decode_num_accepted_tokens_total", "Number of accepted tokens.", static_cast<double>(s.spec.num_accepted_tokens));
  std::vector<std::pair<std::string, double>> per_position;
  for (size_t i = 0; i < s.spec.num_accepted_tokens_per_pos.size(); ++i) {
    per_position.emplace_back("position=\"" + std::to_string(i) + "\"", static_cast<double>(s.spec.num_accepted_tokens_per_pos[i]));
  }
  e.family("vllm:spec_decode_num_accepted_tokens_per_pos_total", "counter", "Accepted tokens per draft position.", per_position);

  // What vLLM does not export.
  e.gauge("inferscope:kv_internal_fragmentation_perc", "Paged KV: allocated but unfilled token slots over allocated slots.",
          s.kv.kv_internal_fragmentation_perc());
  e.gauge("inferscope:kv_reserved_unused_perc", "Contiguous KV: reserved but unfilled token slots over reserved slots.",
          s.kv.kv_reserved_unused_perc());
  e.family("inferscope:kv_blocks", "gauge", "Paged KV blocks by state (shared: used by more than one sequence).",
           {{"state=\"used\"", s.kv.blocks_used}, {"state=\"free\"", s.kv.blocks_free}, {"state=\"cached\"", s.kv.blocks_cached},
            {"state=\"shared\"", s.kv.blocks_shared}});
  e.counter("inferscope:attention_seconds_total", "Seconds spent in attention, every layer of every step.", s.attention_seconds_total);
  e.counter("inferscope:matmul_seconds_total", "Seconds spent in matmuls, every layer of every step.", s.matmul_seconds_total);
  e.counter("inferscope:steps_total", "Engine steps run.", static_cast<double>(s.num_steps));
  return e.text();
}

}  // namespace inferscope
