#include "core/engine/metrics_json.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/common/field_as_double.h"
#include "core/common/json_field.h"
#include "core/engine/step_metrics.h"

namespace inferscope {
namespace {

using nlohmann::json;

// The cache's counts under `kv_stats`, each named once for both directions.
struct KvStatsField {
  const char* key;
  double (*value)(const KvStats&);
  bool (*set)(KvStats&, double);
};

const std::vector<KvStatsField>& kv_stats_fields() {
  using K = KvStats;
  static const std::vector<KvStatsField> fields = {
      {"budget_bytes", field_value<&K::budget_bytes>, set_field<&K::budget_bytes>},
      {"used_bytes", field_value<&K::used_bytes>, set_field<&K::used_bytes>},
      {"filled_tokens", field_value<&K::filled_tokens>, set_field<&K::filled_tokens>},
      {"allocated_tokens", field_value<&K::allocated_tokens>, set_field<&K::allocated_tokens>},
      {"sequences", field_value<&K::sequences>, set_field<&K::sequences>},
      {"blocks_total", field_value<&K::blocks_total>, set_field<&K::blocks_total>},
      {"blocks_used", field_value<&K::blocks_used>, set_field<&K::blocks_used>},
      {"blocks_cached", field_value<&K::blocks_cached>, set_field<&K::blocks_cached>},
      {"blocks_free", field_value<&K::blocks_free>, set_field<&K::blocks_free>},
      {"blocks_shared", field_value<&K::blocks_shared>, set_field<&K::blocks_shared>},
      {"bytes_saved_by_sharing", field_value<&K::bytes_saved_by_sharing>, set_field<&K::bytes_saved_by_sharing>},
      {"prefix_cache_queries", field_value<&K::prefix_cache_queries>, set_field<&K::prefix_cache_queries>},
      {"prefix_cache_hits", field_value<&K::prefix_cache_hits>, set_field<&K::prefix_cache_hits>},
      {"evictions", field_value<&K::evictions>, set_field<&K::evictions>},
  };
  return fields;
}

json kv_stats_json(const KvStats& kv) {
  json out = {{"paged", kv.paged}};
  for (const KvStatsField& f : kv_stats_fields()) out[f.key] = metric_json(f.value(kv), MetricUnit::Count);
  return out;
}

// Sets a field through `set` to the metric at `key`, as metric_json wrote it: a number, or null for
// a value that was not finite.
template <class Struct>
void set_metric(Struct& s, bool (*set)(Struct&, double), const json& j, const char* key, const std::string& where) {
  const bool null = j.is_object() && j.contains(key) && j.at(key).is_null();
  if (!set(s, null ? std::numeric_limits<double>::quiet_NaN() : json_field<double>(j, key, where))) {
    throw std::runtime_error(where + ": field '" + key + "' does not fit its count: " + j.at(key).dump());
  }
}

KvStats kv_stats_from_json(const json& j, const std::string& where) {
  KvStats kv;
  kv.paged = json_field<bool>(j, "paged", where);
  for (const KvStatsField& f : kv_stats_fields()) set_metric(kv, f.set, j, f.key, where);
  return kv;
}

SpecDecodeCounters spec_from_json(const json& j, const std::string& where) {
  SpecDecodeCounters c;
  c.num_drafts = json_field<int64_t>(j, "spec_decode_num_drafts", where);
  c.num_draft_tokens = json_field<int64_t>(j, "spec_decode_num_draft_tokens", where);
  c.num_accepted_tokens = json_field<int64_t>(j, "spec_decode_num_accepted_tokens", where);
  c.num_accepted_tokens_per_pos = json_field<std::vector<int64_t>>(j, "spec_decode_num_accepted_tokens_per_pos", where);
  return c;
}

json step_json(const StepMetrics& st) {
  json sequences = json::array();
  for (const StepSequence& q : st.sequences) {
    sequences.push_back({{"id", q.id},
                         {"prefill_tokens", q.prefill_tokens},
                         {"decode_tokens", q.decode_tokens},
                         {"cached_tokens", q.cached_tokens}});
  }
  json step = json::object();
  for (const StepMetric& m : step_metrics_table()) step[m.key] = metric_json(m.value(st), m.unit);
  step["sequences"] = std::move(sequences);
  step["preempted"] = st.preempted;
  return step;
}

StepMetrics step_from_json(const json& j, const std::string& where) {
  StepMetrics st;
  for (const StepMetric& m : step_metrics_table()) set_metric(st, m.set, j, m.key.c_str(), where);
  const json sequences = json_field<json>(j, "sequences", where);
  if (!sequences.is_array()) throw std::runtime_error(where + ": field 'sequences' is not an array");
  for (size_t i = 0; i < sequences.size(); ++i) {
    const std::string at = where + ": sequences[" + std::to_string(i) + "]";
    st.sequences.push_back({json_field<RequestId>(sequences[i], "id", at), json_field<int32_t>(sequences[i], "prefill_tokens", at),
                            json_field<int32_t>(sequences[i], "decode_tokens", at),
                            json_field<int32_t>(sequences[i], "cached_tokens", at)});
  }
  st.preempted = json_field<std::vector<RequestId>>(j, "preempted", where);
  return st;
}

json request_json(const RequestMetrics& r) {
  return {{"id", r.id},
          {"arrival_s", r.arrival_s},
          {"request_queue_time_seconds", r.request_queue_time_seconds},
          {"time_to_first_token_seconds", r.time_to_first_token_seconds},
          {"inter_token_latency_seconds", r.inter_token_latency_seconds},
          {"e2e_request_latency_seconds", r.e2e_request_latency_seconds},
          {"prompt_tokens", r.prompt_tokens},
          {"generation_tokens", r.generation_tokens},
          {"num_preemptions", r.num_preemptions},
          {"finish_reason", r.finish_reason},
          {"client", r.client},
          {"spec_decode", spec_json(r.spec)}};
}

RequestMetrics request_from_json(const json& j, const std::string& where) {
  RequestMetrics r;
  r.id = json_field<RequestId>(j, "id", where);
  r.arrival_s = json_field<double>(j, "arrival_s", where);
  r.request_queue_time_seconds = json_field<double>(j, "request_queue_time_seconds", where);
  r.time_to_first_token_seconds = json_field<double>(j, "time_to_first_token_seconds", where);
  r.inter_token_latency_seconds = json_field<std::vector<double>>(j, "inter_token_latency_seconds", where);
  r.e2e_request_latency_seconds = json_field<double>(j, "e2e_request_latency_seconds", where);
  r.prompt_tokens = json_field<int32_t>(j, "prompt_tokens", where);
  r.generation_tokens = json_field<int32_t>(j, "generation_tokens", where);
  r.num_preemptions = json_field<int32_t>(j, "num_preemptions", where);
  r.finish_reason = json_field<std::string>(j, "finish_reason", where);
  r.client = json_field<std::string>(j, "client", where);
  r.spec = spec_from_json(json_field<json>(j, "spec_decode", where), where + ": spec_decode");
  return r;
}

// The objects of array `key`, each read by `read` with its index in `where`.
template <class T, class Read>
std::vector<T> list_from_json(const json& j, const char* key, const std::string& where, Read read) {
  const json list = json_field<json>(j, key, where);
  if (!list.is_array()) throw std::runtime_error(where + ": field '" + key + "' is not an array");
  std::vector<T> out;
  out.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) out.push_back(read(list[i], where + ": " + key + "[" + std::to_string(i) + "]"));
  return out;
}

}  // namespace

json metric_json(double v, MetricUnit unit) {
  return whole_unit(unit) && v == std::floor(v) ? json(static_cast<int64_t>(v)) : json(v);
}

json spec_json(const SpecDecodeCounters& c) {
  return {{"spec_decode_num_drafts", c.num_drafts},
          {"spec_decode_num_draft_tokens", c.num_draft_tokens},
          {"spec_decode_num_accepted_tokens", c.num_accepted_tokens},
          {"spec_decode_num_accepted_tokens_per_pos", c.num_accepted_tokens_per_pos},
          {"acceptance_rate", c.acceptance_rate()},
          {"mean_acceptance_length", c.mean_acceptance_length()}};
}

json metrics_json(const EngineMetricsSnapshot& s) {
  json steps = json::array();
  for (const StepMetrics& st : s.steps) steps.push_back(step_json(st));
  json requests = json::array();
  for (const RequestMetrics& r : s.requests) requests.push_back(request_json(r));
  json out = json::object();
  for (const SnapshotMetric& m : snapshot_metrics_table()) out[m.key] = metric_json(m.value(s), m.unit);
  out.update(json{{"weights_quant", s.weights_quant},
                  {"converting_to", s.converting_to},
                  {"device", s.device},
                  {"device_fallback", s.device_fallback},
                  {"device_memory", s.device_memory ? json{{"weights_bytes", s.device_memory->weights},
                                                           {"kv_bytes", s.device_memory->kv},
                                                           {"scratch_bytes", s.device_memory->scratch}}
                                                    : json()},
                  {"kv_stats", kv_stats_json(s.kv)},
                  {"spec_mode", s.spec_mode},
                  {"spec_decode", spec_json(s.spec)},
                  {"steps", std::move(steps)},
                  {"requests", std::move(requests)}});
  return out;
}

EngineMetricsSnapshot metrics_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) throw std::runtime_error(where + ": not a JSON object");
  EngineMetricsSnapshot s;
  for (const SnapshotMetric& m : snapshot_metrics_table()) {
    if (m.set != nullptr) set_metric(s, m.set, j, m.key.c_str(), where);
  }
  s.weights_quant = json_field<std::string>(j, "weights_quant", where);
  s.converting_to = json_field<std::string>(j, "converting_to", where);
  s.device = json_field<std::string>(j, "device", where);
  s.device_fallback = json_field<std::string>(j, "device_fallback", where);
  if (const json memory = json_field<json>(j, "device_memory", where); !memory.is_null()) {
    const std::string at = where + ": device_memory";
    s.device_memory = DeviceMemory{json_field<size_t>(memory, "weights_bytes", at), json_field<size_t>(memory, "kv_bytes", at),
                                   json_field<size_t>(memory, "scratch_bytes", at)};
  }
  s.kv = kv_stats_from_json(json_field<json>(j, "kv_stats", where), where + ": kv_stats");
  s.spec_mode = json_field<std::string>(j, "spec_mode", where);
  s.spec = spec_from_json(json_field<json>(j, "spec_decode", where), where + ": spec_decode");
  s.steps = list_from_json<StepMetrics>(j, "steps", where, step_from_json);
  s.requests = list_from_json<RequestMetrics>(j, "requests", where, request_from_json);
  return s;
}

}  // namespace inferscope
