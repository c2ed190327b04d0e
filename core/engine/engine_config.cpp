#include "core/engine/engine_config.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "core/common/text_format.h"
#include "core/engine/setting_table.h"
#include "core/kv/kv_dtype.h"
#include "core/model/llama_model.h"

namespace inferscope {
namespace {

using Row = EngineSetting;

void append(std::vector<EngineSetting>& rows, std::vector<EngineSetting> more) {
  for (EngineSetting& s : more) rows.push_back(std::move(s));
}

// The KV rows of EngineConfig itself (the context and the cache's precision), after KvConfig's own.
std::vector<EngineSetting> cache_rows() {
  const std::string section = "KV cache";
  return {
      Row::integer({.key = "context", .flag = "--ctx", .alias = "-c", .help = "context length (default: the model's)",
                    .step = 256, .lowest_means = "model's", .switch_cost = kSwitchNewCache, .section = section,
                    .label = "context", .name = "context",
                    .explanation = "Longest conversation in tokens; contiguous mode reserves this much per sequence."},
                   0, 1 << 24, [](const EngineConfig& c) { return int64_t{c.context_length}; },
                   [](EngineConfig& c, int64_t v) {
                     c.context_length = static_cast<int32_t>(v);
                     c.kv.max_seq_len = 0;  // the contiguous reservation follows the context
                   }),
      Row::choice({.key = "kv_dtype", .flag = "--kv-dtype",
                   .help = "KV cache precision: f16 (default) | f32 | q8 (int8 blocks of 32 with a scale)",
                   .switch_cost = kSwitchNewCache, .section = section, .label = "KV dtype", .name = "KV dtype",
                   .explanation = "Precision of the cached keys and values: f32 doubles the bytes per token, q8 "
                                  "(Q8_0) about halves them.",
                   .summary = [](const EngineConfig& c) { return "KV " + std::string(kv_dtype_name(c.kv_dtype)); }},
                  kv_dtype_names(), [](const EngineConfig& c) { return std::string(kv_dtype_name(c.kv_dtype)); },
                  [](EngineConfig& c, const std::string& v) { c.kv_dtype = *kv_dtype_from_name(v); }),
  };
}

// The Compute rows of EngineConfig itself; `forward` holds the forward pass's own, put after attention.
std::vector<EngineSetting> compute_rows(std::vector<EngineSetting> forward) {
  const std::string section = "Compute";
  std::vector<EngineSetting> rows = {
      Row::choice({.key = "attention", .flag = "--attention",
                   .help = "attention: flash (default, tiled with online softmax) | naive (full score matrix)",
                   .switch_cost = kSwitchNextStep, .section = section, .label = "attention", .name = "attention",
                   .explanation = "Naive builds the whole score matrix per head; flash streams K/V tiles with an "
                                  "online softmax, summing in another order (close, not bit-identical).",
                   .summary = [](const EngineConfig& c) { return c.attention; }},
                  {"flash", "naive"}, [](const EngineConfig& c) { return c.attention; },
                  [](EngineConfig& c, const std::string& v) { c.attention = v; }),
  };
  append(rows, std::move(forward));
  append(rows, {
      Row::choice({.key = "quant", .flag = "--quant",
                   .help = "weight format: native (default, the file's own) | f32 | f16 | q8 | q4 | q4_1 | q4_k "
                           "(Q4_K_M mix) | q6_k (converted after loading)",
                   .switch_cost = "converts the weights in the background; a new KV cache when they swap in",
                   .section = section, .label = "quantization", .name = "weights",
                   .explanation = "The weight format the matmuls read (native: as stored in the file); a change "
                                  "converts in the background.",
                   .summary = [](const EngineConfig& c) {
                     return c.quant == WeightQuant::Native ? std::string()
                                                           : "weights " + std::string(weight_quant_name(c.quant));
                   }},
                  weight_quant_name_list(), [](const EngineConfig& c) { return std::string(weight_quant_name(c.quant)); },
                  [](EngineConfig& c, const std::string& v) { c.quant = *weight_quant_from_name(v); }),
      Row::integer({.key = "threads", .flag = "--threads", .alias = "-t", .help = "worker threads (default: all cores)",
                    .lowest_means = "all cores", .timing = SettingTiming::Build, .switch_cost = kSwitchNewEngine,
                    .section = section, .label = "threads", .name = "threads",
                    .explanation = "Matmul worker threads."},
                   0, 1024, [](const EngineConfig& c) { return int64_t{c.threads}; },
                   [](EngineConfig& c, int64_t v) { c.threads = static_cast<int32_t>(v); }),
      {.key = "device", .flag = "--device",
       .help = "where the forward pass runs: cpu (default) | cuda | cuda:N (a CUDA build and device)",
       .kind = SettingKind::Device, .switch_cost = "builds the forward pass there and a new KV cache",
       .section = section, .label = "device", .name = "device",
       .explanation = "Where the model runs; a change rebuilds the forward pass there and recomputes running "
                      "requests. A device that fails sends the engine to the CPU.",
       .get = [](const EngineConfig& c) { return compute_device_name(c.device); },
       .set = [](EngineConfig& c, const std::string& v) {
         const std::optional<ComputeDevice> device = compute_device_from_name(v);
         if (!device) throw SettingError("is not a device (cpu, cuda or cuda:N)");
         c.device = *device;
       },
       .remembered = false},
  });
  return rows;
}

}  // namespace

std::vector<EngineSetting> engine_config_settings() {
  std::vector<EngineSetting> rows = settings_of_part(kv_config_settings(), &EngineConfig::kv);
  append(rows, cache_rows());
  append(rows, compute_rows(settings_of_part(forward_option_settings(), &EngineConfig::forward)));
  append(rows, settings_of_part(scheduler_settings(), &EngineConfig::scheduler));
  append(rows, settings_of_part(spec_settings(), &EngineConfig::spec));
  return rows;
}

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
