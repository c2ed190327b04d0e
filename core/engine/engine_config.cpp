#include "core/engine/engine_config.h"

#include <algorithm>
#include <cstdio>

#include "core/kv/kv_dtype.h"
#include "core/model/llama_model.h"

namespace inferscope {

EngineConfig resolve_config(EngineConfig c, const LlamaModel& model) {
  const int32_t model_ctx = model.config().context_length;
  c.context_length = c.context_length > 0 ? std::min(c.context_length, model_ctx) : model_ctx;
  if (c.kv.max_seq_len <= 0) c.kv.max_seq_len = c.context_length;
  if (c.kv.budget_bytes == 0) c.kv.budget_bytes = kv_budget_for_sequences(model.kv_geometry(c.kv_dtype), c.kv, c.budget_sequences);
  c.scheduler.spec_tokens = c.spec.enabled() ? c.spec.max_k() : 0;
  return c;
}

bool needs_new_cache(const EngineConfig& a, const EngineConfig& b) {
  return a.kv.kind != b.kv.kind || a.kv.block_size != b.kv.block_size || a.kv.budget_bytes != b.kv.budget_bytes ||
         a.kv.max_seq_len != b.kv.max_seq_len || a.kv.prefix_cache != b.kv.prefix_cache ||
         a.kv_dtype != b.kv_dtype || a.context_length != b.context_length || draft_kv_changes(a.spec, b.spec);
}

bool draft_kv_changes(const SpecConfig& a, const SpecConfig& b) {
  if (!a.own_draft_kv() && !b.own_draft_kv()) return false;
  return a.mode != b.mode || a.draft_model != b.draft_model || a.draft_quant != b.draft_quant;
}

std::string describe_change(const EngineConfig& a, const EngineConfig& b) {
  std::string s;
  auto add = [&](const std::string& part) { s += (s.empty() ? "" : ", ") + part; };
  if (a.kv.kind != b.kv.kind) add("KV " + std::string(kv_kind_name(b.kv.kind)));
  if (a.kv.block_size != b.kv.block_size) add("block size " + std::to_string(b.kv.block_size));
  if (a.kv.budget_bytes != b.kv.budget_bytes) {
    char mib[32];
    std::snprintf(mib, sizeof mib, "%.2f", static_cast<double>(b.kv.budget_bytes) / (1 << 20));
    add("KV budget " + std::string(mib) + " MiB");
  }
  if (a.kv.max_seq_len != b.kv.max_seq_len) add("max_seq_len " + std::to_string(b.kv.max_seq_len));
  if (a.kv.prefix_cache != b.kv.prefix_cache) add(std::string("prefix cache ") + (b.kv.prefix_cache ? "on" : "off"));
  if (a.kv_dtype != b.kv_dtype) add("KV dtype " + std::string(kv_dtype_name(b.kv_dtype)));
  if (a.context_length != b.context_length) add("context " + std::to_string(b.context_length));
  if (a.attention != b.attention) add("attention " + b.attention);
  if (a.quant != b.quant) add("weights " + std::string(weight_quant_name(b.quant)));
  if (a.scheduler.policy != b.scheduler.policy) add("scheduler " + std::string(scheduler_policy_name(b.scheduler.policy)));
  if (a.scheduler.max_batch_tokens != b.scheduler.max_batch_tokens) {
    add("max_batch_tokens " + std::to_string(b.scheduler.max_batch_tokens));
  }
  if (a.scheduler.max_running != b.scheduler.max_running) add("max_running " + std::to_string(b.scheduler.max_running));
  if (a.spec != b.spec) add(describe_spec(b.spec));
  if (a.device != b.device) add("device " + compute_device_name(b.device));
  return s.empty() ? "no change" : s;
}

AttentionBenchOptions attention_bench_options(const LlamaModel& model, const EngineConfig& config) {
  AttentionBenchOptions o;
  o.shape = AttentionShape{model.config().n_heads, model.config().n_kv_heads, model.config().head_dim};
  o.kv_dtype = config.kv_dtype;
  o.block_size = config.kv.block_size;
  return o;
}

}  // namespace inferscope
