// What an Engine runs with. KV, attention, scheduler, quantization and device settings can change
// while it runs (between steps); threads and the forward options are fixed when it is built.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/attention/attention_bench.h"
#include "core/common/setting_row.h"
#include "core/kv/kv_config.h"
#include "core/quant/weight_quant.h"
#include "core/model/compute_device.h"
#include "core/sched/scheduler_config.h"
#include "core/spec/spec_config.h"
#include "core/model/forward_options.h"

namespace inferscope {

class LlamaModel;

struct EngineConfig {
  // The KV cache; changing any of these rebuilds it (running requests are preempted and recomputed).
  KvConfig kv;                 // budget_bytes 0 = budget_sequences of max_seq_len; max_seq_len 0 = the context
  int32_t budget_sequences = 4;  // what a budget of 0 makes room for
  DType kv_dtype = DType::F16;
  int32_t context_length = 0;  // 0 = the model's; at most the model's
  SchedulerConfig scheduler;
  std::string attention = "flash";  // "flash" or "naive"; switched between steps
  // The weights' quantization level. A change converts in the background while requests go on;
  // the new weights then replace the old between steps, with a new KV cache (running requests are
  // recomputed under the new weights, their text so far kept).
  WeightQuant quant = WeightQuant::Native;
  // Speculative decoding: who drafts and how many tokens per step (scheduler.spec_tokens follows k).
  // A draft with a KV cache of its own takes its share of kv.budget_bytes.
  SpecConfig spec;
  // Where the forward pass runs: the CPU (default) or a CUDA device. A change builds the forward pass
  // there (refused, with the reason, where it cannot run) and a new KV cache, as a quantization
  // level does; a device that fails mid-step sends the engine to the CPU.
  ComputeDevice device;
  // Fixed at construction:
  int32_t threads = 0;         // 0 = every hardware thread
  ForwardOptions forward;
};

// One engine setting (core/common/setting_row.h); the table and what walks it: core/engine/setting_table.h.
using EngineSetting = SettingRow<EngineConfig>;
// Every setting, in the Config panel's order: the rows of the parts above (their own file pairs
// declare them) and the engine's own rows (engine_config.cpp).
std::vector<EngineSetting> engine_config_settings();

// The config with its defaults filled in for `model` (context length, max_seq_len, budget).
EngineConfig resolve_config(EngineConfig config, const LlamaModel& model);
// True when going from `a` to `b` needs a new KV cache (both resolved).
bool needs_new_cache(const EngineConfig& a, const EngineConfig& b);
// True when a draft's own KV cache appears, goes or changes shape: the budget is shared anew.
bool draft_kv_changes(const SpecConfig& a, const SpecConfig& b);
// One line that says what changed, for the engine's config callback.
std::string describe_change(const EngineConfig& a, const EngineConfig& b);

// An attention sweep (bench --attention-sweep, the Learn tab's flash-vs-naive experiment) on the model's
// attention shape, with this config's KV dtype and block size.
AttentionBenchOptions attention_bench_options(const LlamaModel& model, const EngineConfig& config);

}  // namespace inferscope
