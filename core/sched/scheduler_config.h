// What the scheduler runs with: its policy and its limits per step, switched between steps.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/common/setting_row.h"

namespace inferscope {

enum class SchedulerPolicy { Continuous, Static };
std::string_view scheduler_policy_name(SchedulerPolicy policy);
std::optional<SchedulerPolicy> scheduler_policy_from_name(std::string_view name);

struct SchedulerConfig {
  SchedulerPolicy policy = SchedulerPolicy::Continuous;
  int32_t max_batch_tokens = 0;  // tokens computed per step at most (decodes always run); 0 = no limit
  int32_t max_running = 0;       // requests running at once at most (vLLM's max_num_seqs); 0 = no limit
  int32_t spec_tokens = 0;       // speculative decoding: draft slots per decode (k); 0 = off, set by the engine
};

// The settings above, in the Config panel's order (spec_tokens follows the speculation settings).
std::vector<SettingRow<SchedulerConfig>> scheduler_settings();

}  // namespace inferscope
