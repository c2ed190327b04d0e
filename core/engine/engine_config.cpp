#include "core/engine/engine_config.h"

#include <algorithm>

#include "core/common/text_format.h"
#include "core/engine/setting_table.h"
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
  std::vector<std::string> parts;
  for (const EngineSetting* s : changed_settings(a, b)) parts.push_back(setting_text(*s, b));
  return parts.empty() ? "no change" : join(parts);
}

AttentionBenchOptions attention_bench_options(const LlamaModel& model, const EngineConfig& config) {
  AttentionBenchOptions o;
  o.shape = AttentionShape{model.config().n_heads, model.config().n_kv_heads, model.config().head_dim};
  o.kv_dtype = config.kv_dtype;
  o.block_size = config.kv.block_size;
  return o;
}

}  // namespace inferscope
