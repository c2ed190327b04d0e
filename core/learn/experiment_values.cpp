#include "core/learn/experiment_values.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "core/model/llama_model.h"

namespace inferscope {

void add_run_values(ValueMap& v, const MeasuredRun& run) {
  const std::string p = run.name + ".";
  const nlohmann::json summary = summary_json(run.result.summary);
  for (const auto& [key, value] : summary.items()) {
    if (value.is_number()) v[p + key] = value.get<double>();
    if (!value.is_object()) continue;
    for (const auto& [inner, number] : value.items()) {  // spec_decode.acceptance_rate, ...
      if (number.is_number()) v[p + key + "." + inner] = number.get<double>();
    }
  }
  // Steps that computed prompt tokens against steps that only decoded.
  struct Phase {
    double seconds = 0, tokens = 0, flops = 0, bytes = 0;
  } prefill, decode;
  double attention_seconds = 0, matmul_seconds = 0, scratch_peak = 0, decode_dispatches = 0, decode_steps = 0;
  double verify_steps = 0, draft_seconds = 0, verify_seconds = 0;  // the steps that scored drafts
  double decode_output_tokens = 0;  // what decode steps added to the outputs: 1 per sequence, plus accepted drafts
  double chosen_k = 0, chosen_steps = 0, undrafted_steps = 0;  // steps with a speculating decode: the draft length allowed
  for (const StepMetrics& st : run.result.metrics.steps) {
    Phase& ph = st.prefill_tokens > 0 ? prefill : decode;
    ph.seconds += st.duration_s;
    ph.tokens += st.prefill_tokens > 0 ? st.prefill_tokens : st.decode_tokens;
    ph.flops += st.flops;
    ph.bytes += st.weight_bytes_read + st.kv_bytes_read;
    attention_seconds += st.attention_seconds;
    matmul_seconds += st.matmul_seconds;
    if (st.prefill_tokens == 0) {
      decode_dispatches += static_cast<double>(st.pool_dispatches);
      ++decode_steps;
      decode_output_tokens += st.decode_tokens - st.spec_draft_tokens + st.spec_accepted_tokens;
    }
    scratch_peak = std::max(scratch_peak, static_cast<double>(st.attention_scratch_bytes));
    if (st.spec_chosen_k >= 0) {
      chosen_k += st.spec_chosen_k;
      ++chosen_steps;
      if (st.spec_chosen_k == 0) ++undrafted_steps;
    }
    if (st.spec_draft_tokens > 0) {
      ++verify_steps;
      draft_seconds += st.draft_seconds;
      verify_seconds += st.verify_seconds;
    }
  }
  auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  for (const auto& [name, ph] : {std::pair{"prefill", prefill}, std::pair{"decode", decode}}) {
    const std::string n = p + name;
    v[n + "_seconds"] = ph.seconds;
    v[n + "_tokens_per_second"] = ratio(ph.tokens, ph.seconds);
    v[n + "_intensity"] = ratio(ph.flops, ph.bytes);
    v[n + "_flops_per_second"] = ratio(ph.flops, ph.seconds);
    v[n + "_bytes_per_second"] = ratio(ph.bytes, ph.seconds);
  }
  v[p + "attention_seconds"] = attention_seconds;
  v[p + "matmul_seconds"] = matmul_seconds;
  v[p + "decode_steps"] = decode_steps;
  v[p + "decode_dispatches_per_step"] = ratio(decode_dispatches, decode_steps);
  v[p + "decode_seconds_per_step"] = ratio(decode.seconds, decode_steps);
  v[p + "decode_output_tokens_per_step"] = ratio(decode_output_tokens, decode_steps);
  // Per verify pass, as the acceptance chart's draft and verify lines and its summary line draw them.
  v[p + "verify_steps"] = verify_steps;
  v[p + "draft_seconds_per_pass"] = ratio(draft_seconds, verify_steps);
  v[p + "verify_seconds_per_pass"] = ratio(verify_seconds, verify_steps);
  v[p + "spec_chosen_k_mean"] = ratio(chosen_k, chosen_steps);
  v[p + "spec_undrafted_steps"] = undrafted_steps;
  v[p + "attention_scratch_bytes_peak"] = scratch_peak;
  v[p + "weight_bytes"] = static_cast<double>(run.result.metrics.weight_bytes);
  v[p + "kv_bytes_per_token"] = static_cast<double>(run.kv_bytes_per_token);
  const KvStats& k = run.peak_kv;
  v[p + "peak_used_bytes"] = static_cast<double>(k.used_bytes);
  v[p + "peak_filled_tokens"] = static_cast<double>(k.filled_tokens);
  v[p + "peak_allocated_tokens"] = static_cast<double>(k.allocated_tokens);
  v[p + "peak_unused_tokens"] = static_cast<double>(k.allocated_tokens - std::min(k.allocated_tokens, k.filled_tokens));
  v[p + "peak_unused_bytes"] = v[p + "peak_unused_tokens"] * static_cast<double>(run.kv_bytes_per_token);
  v[p + "peak_sequences"] = k.sequences;
  // Per request: its own decode speed (output tokens after the first over the time they took).
  double speeds = 0, counted = 0;
  for (const RequestMetrics& r : run.result.metrics.requests) {
    const double decode_s = r.e2e_request_latency_seconds - r.time_to_first_token_seconds;
    if (r.generation_tokens < 2 || decode_s <= 0) continue;
    speeds += (r.generation_tokens - 1) / decode_s;
    ++counted;
  }
  v[p + "request_decode_tokens_per_second_mean"] = ratio(speeds, counted);
  v[p + "ttft_ms_p50"] = 1e3 * run.result.summary.time_to_first_token_seconds_p50;
  const SpecConfig& spec = run.result.config.spec;
  v[p + "spec_k"] = spec.enabled() ? spec.max_k() : 0;
  const SpecDecodeCounters& drafts = run.result.summary.spec;
  for (size_t i = 0; i < static_cast<size_t>(v[p + "spec_k"]); ++i) {
    const auto accepted = i < drafts.num_accepted_tokens_per_pos.size() ? drafts.num_accepted_tokens_per_pos[i] : 0;
    v[p + "spec_decode.acceptance_at_" + std::to_string(i + 1)] =
        ratio(static_cast<double>(accepted), static_cast<double>(drafts.num_drafts));
  }
  if (run.perplexity) v[p + "perplexity"] = *run.perplexity;
}

void add_pair_values(ValueMap& v, const std::vector<MeasuredRun>& runs, size_t vocab) {
  for (const MeasuredRun& a : runs) {
    for (const MeasuredRun& b : runs) {
      if (&a == &b) continue;
      // The earliest divergence over requests paired by id (both runs ran the same workload).
      int first = -1;
      const size_t n = std::min(a.result.outputs.size(), b.result.outputs.size());
      for (size_t i = 0; i < n; ++i) {
        const int d = first_divergence(a.result.outputs[i].tokens, b.result.outputs[i].tokens);
        if (d >= 0 && (first < 0 || d < first)) first = d;
      }
      v["first_divergence." + a.name + "." + b.name] = first;
      v["same_outputs." + a.name + "." + b.name] = first < 0 && a.result.outputs.size() == b.result.outputs.size();
      double largest = 0;
      bool kept = n > 0;
      for (size_t i = 0; i < n; ++i) {
        kept = kept && !a.result.outputs[i].logits.empty() && !b.result.outputs[i].logits.empty();
        largest = std::max(largest, max_logit_difference(a.result.outputs[i], b.result.outputs[i], vocab));
      }
      if (kept) v["max_logit_diff." + a.name + "." + b.name] = largest;
    }
  }
}

void add_sweep_values(ValueMap& v, const std::vector<AttentionBenchRow>& rows) {
  std::map<std::string, std::map<int32_t, std::map<std::string, const AttentionBenchRow*>>> by_phase;
  for (const AttentionBenchRow& r : rows) {
    const std::string p = "sweep." + r.phase + "." + r.implementation + ".";
    v[p + "seconds." + std::to_string(r.context)] = r.seconds_mean;
    v[p + "scratch_bytes." + std::to_string(r.context)] = static_cast<double>(r.scratch_bytes);
    by_phase[r.phase][r.context][r.implementation] = &r;
  }
  for (const auto& [phase, contexts] : by_phase) {
    const std::string p = "sweep." + phase + ".";
    // Walking down from the longest context: the crossover is where flash stops being faster.
    double crossover = -1;
    bool faster_above = true;
    for (auto it = contexts.rbegin(); it != contexts.rend(); ++it) {
      const auto& [context, by_impl] = *it;
      const AttentionBenchRow* naive = by_impl.count("naive") ? by_impl.at("naive") : nullptr;
      const AttentionBenchRow* flash = by_impl.count("flash") ? by_impl.at("flash") : nullptr;
      if (!naive || !flash) continue;
      const std::string n = std::to_string(context);
      v[p + "speedup." + n] = flash->seconds_mean > 0 ? naive->seconds_mean / flash->seconds_mean : 0;
      v[p + "max_abs_diff." + n] = std::max(naive->max_abs_diff, flash->max_abs_diff);
      faster_above = faster_above && flash->seconds_mean < naive->seconds_mean;
      if (faster_above) crossover = context;
    }
    v[p + "crossover"] = crossover;
    v["sweep.shortest"] = contexts.begin()->first;
    v["sweep.longest"] = contexts.rbegin()->first;
  }
}

void add_model_values(ValueMap& v, const LlamaModel& model) {
  const LlamaConfig& c = model.config();
  v["model.n_layers"] = c.n_layers;
  v["model.n_heads"] = c.n_heads;
  v["model.n_kv_heads"] = c.n_kv_heads;
  v["model.head_dim"] = c.head_dim;
  v["model.dim"] = c.dim;
  v["model.ffn_dim"] = c.ffn_dim;
  v["model.vocab_size"] = c.vocab_size;
  v["model.context_length"] = c.context_length;
  v["model.local_layers"] = c.windowed_layers();
  v["model.sliding_window"] = c.windowed_layers() > 0 ? c.sliding_window : 0;
  v["model.gqa_ratio"] = static_cast<double>(c.n_heads) / c.n_kv_heads;
  v["model.parameters"] = static_cast<double>(model.parameter_count());
  // The file's own storage: bits per weight over its 2-D matrices.
  double params = 0;
  const LlamaWeights& w = model.weights();
  for (const LlamaLayerWeights& l : w.layers) {
    for (const MatrixRef* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) params += static_cast<double>(m->rows) * m->cols;
  }
  params += static_cast<double>(w.token_embd.rows) * w.token_embd.cols;
  if (w.output.data != w.token_embd.data) params += static_cast<double>(w.output.rows) * w.output.cols;
  v["model.native_weight_bytes"] = static_cast<double>(w.matrix_bytes());
  v["model.native_bits_per_weight"] = 8.0 * static_cast<double>(w.matrix_bytes()) / params;
}

void add_derived_values(ValueMap& v, const std::vector<std::pair<std::string, std::string>>& derived) {
  std::vector<std::pair<std::string, std::string>> left = derived;
  // Each pass evaluates what it can; a pass that makes no progress leaves only broken values.
  while (!left.empty()) {
    std::vector<std::pair<std::string, std::string>> later;
    std::string first_error;
    for (const auto& [name, expression] : left) {
      try {
        v[name] = evaluate(expression, v);
      } catch (const ExpressionError& e) {
        if (first_error.empty()) first_error = "value '" + name + "': " + e.what();
        later.emplace_back(name, expression);
      }
    }
    if (later.size() == left.size()) throw ExpressionError(first_error);
    left = std::move(later);
  }
}

}  // namespace inferscope
