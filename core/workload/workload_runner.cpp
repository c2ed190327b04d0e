#include "core/workload/workload_runner.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/engine/engine_core.h"
#include "core/engine/metrics_json.h"

namespace inferscope {

WorkloadResult run_workload(const LlamaModel& model, const EngineConfig& config, const std::vector<Request>& requests,
                            const WorkloadRunOptions& options) {
  std::vector<const Request*> order;
  for (const Request& r : requests) order.push_back(&r);
  std::stable_sort(order.begin(), order.end(), [](const Request* a, const Request* b) { return a->arrival_s < b->arrival_s; });

  std::map<RequestId, WorkloadOutput> outputs;
  int32_t ended = 0;
  EngineCallbacks callbacks;
  callbacks.on_token = [&](RequestId id, std::string_view piece, TokenId token, const TokenTiming&) {
    WorkloadOutput& out = outputs[id];
    if (token >= 0) out.tokens.push_back(token);
    out.text += piece;
    out.pieces.push_back({token, std::string(piece)});
  };
  callbacks.on_verify = [&](RequestId id, const Verification& verification) {
    WorkloadOutput& out = outputs[id];
    out.verifications.push_back({out.pieces.size(), verification});
  };
  std::map<RequestId, int32_t> prompt_lengths;
  // The row at position p chose generated token p + 1 - prompt length.
  callbacks.on_logits = [&](RequestId id, int32_t position, std::span<const float> row) {
    std::vector<float>& kept = outputs[id].logits;
    const size_t at = static_cast<size_t>(position + 1 - prompt_lengths.at(id)) * row.size();
    if (kept.size() < at + row.size()) kept.resize(at + row.size());
    std::copy(row.begin(), row.end(), kept.begin() + static_cast<ptrdiff_t>(at));
  };
  callbacks.on_error = [&](RequestId id, const std::string& message) { outputs[id].error = message; };
  callbacks.on_finished = [&](RequestId id, StopReason reason) {
    outputs[id].finish_reason = stop_reason_name(reason);
    ++ended;
  };
  EngineCoreOptions core_options;
  core_options.dry_run = options.dry_run;
  core_options.step_window = SIZE_MAX;  // the whole timeline
  core_options.finished_window = SIZE_MAX;
  EngineCore core(model, config, std::move(callbacks), core_options);

  const int32_t total = static_cast<int32_t>(requests.size());
  size_t next = 0;
  while (true) {
    if (options.cancel && options.cancel->load()) {
      core.abort_all();
      break;
    }
    // Everyone who has arrived by now joins before the next step.
    while (next < order.size() && order[next]->arrival_s <= core.now()) {
      const Request& r = *order[next++];
      EngineRequest e;
      e.prompt_tokens = r.tokens;
      e.max_tokens = r.max_output_tokens;
      e.sampling = options.sampling;
      if (options.keep_logits) e.logits = LogitsOutput::Sampled;
      prompt_lengths[r.id] = static_cast<int32_t>(r.tokens.size());
      outputs[r.id].id = r.id;
      core.add(r.id, std::move(e), r.arrival_s);
    }
    if (core.idle()) {
      if (next == order.size()) break;
      // The wall clock sleeps in short slices, so a cancel is seen soon.
      const double arrival = order[next]->arrival_s;
      core.clock().wait_until(core.clock().is_virtual() ? arrival : std::min(arrival, core.now() + 0.1));
      continue;
    }
    core.step();
    if (options.after_step) options.after_step(core);
    if (options.on_progress) options.on_progress(ended, total);
  }

  WorkloadResult result;
  result.config = core.config();
  result.duration_s = core.now();
  result.metrics = core.metrics().snapshot(result.duration_s);
  result.summary = summarize(result.metrics, result.duration_s);
  for (auto& [id, out] : outputs) result.outputs.push_back(std::move(out));
  return result;
}

double max_logit_difference(const WorkloadOutput& a, const WorkloadOutput& b, size_t vocab) {
  const int divergence = first_divergence(a.tokens, b.tokens);
  // Rows 0 .. divergence (all rows when identical) saw the same prompt and tokens in both runs.
  const size_t rows = vocab == 0 ? 0 : std::min(a.logits.size(), b.logits.size()) / vocab;
  const size_t compared = divergence < 0 ? rows : std::min(rows, static_cast<size_t>(divergence) + 1);
  double largest = 0;
  for (size_t i = 0; i < compared * vocab; ++i) largest = std::max(largest, static_cast<double>(std::abs(a.logits[i] - b.logits[i])));
  return largest;
}

int first_divergence(std::span<const TokenId> a, std::span<const TokenId> b) {
  const auto [ia, ib] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  if (ia == a.end() && ib == b.end()) return -1;
  return static_cast<int>(ia - a.begin());
}

nlohmann::json workload_json(const WorkloadResult& result, bool with_steps) {
  nlohmann::json timeline = metrics_json(result.metrics);
  std::map<RequestId, const WorkloadOutput*> by_id;
  for (const WorkloadOutput& out : result.outputs) by_id[out.id] = &out;
  const bool on_server = !result.metrics.source.empty();
  nlohmann::json requests = nlohmann::json::array();
  for (nlohmann::json& r : timeline["requests"]) {
    const auto it = by_id.find(r["id"].get<RequestId>());
    if (it != by_id.end()) {
      r["text"] = it->second->text;
      if (!it->second->error.empty()) r["error"] = it->second->error;
    }
    // what a server does not say of each request: its time in the queue, its preemptions, its drafts
    if (on_server) r["request_queue_time_seconds"] = r["num_preemptions"] = r["spec_decode"] = nullptr;
    requests.push_back(std::move(r));
  }
  std::sort(requests.begin(), requests.end(),
            [](const nlohmann::json& a, const nlohmann::json& b) { return a["id"].get<int>() < b["id"].get<int>(); });
  nlohmann::json out = summary_json(result.summary);
  // the figures the run did not measure (a server's missing counters and panels): null, and named
  nlohmann::json unavailable = nlohmann::json::array();
  for (const ServeFigure& f : serve_figures()) {
    if (!figure_unmeasured(f, result.metrics, f.value(result.summary))) continue;
    out[f.key] = nullptr;
    unavailable.push_back(f.key);
  }
  out["unavailable"] = std::move(unavailable);
  if (!result.server_metrics_error.empty()) out["metrics_error"] = result.server_metrics_error;
  out["requests"] = std::move(requests);
  if (with_steps) out["step_timeline"] = std::move(timeline["steps"]);
  return out;
}

}  // namespace inferscope
