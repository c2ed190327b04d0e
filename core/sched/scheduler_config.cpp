#include "core/sched/scheduler_config.h"

#include <string>

namespace inferscope {

std::string_view scheduler_policy_name(SchedulerPolicy policy) {
  return policy == SchedulerPolicy::Static ? "static" : "continuous";
}

std::optional<SchedulerPolicy> scheduler_policy_from_name(std::string_view name) {
  if (name == "continuous") return SchedulerPolicy::Continuous;
  if (name == "static") return SchedulerPolicy::Static;
  return std::nullopt;
}

std::vector<SettingRow<SchedulerConfig>> scheduler_settings() {
  using Row = SettingRow<SchedulerConfig>;
  const std::string section = "Scheduler";
  return {
      Row::choice({.key = "scheduler", .flag = "--scheduler",
                   .help = "continuous (default: every step admits) or static (a batch runs until its longest ends)",
                   .switch_cost = kSwitchNextStep, .section = section, .label = "policy", .name = "scheduler",
                   .explanation = "Continuous: requests join and leave at every step (Orca); static: a batch runs "
                                  "until its longest ends.",
                   .summary = [](const SchedulerConfig& c) { return std::string(scheduler_policy_name(c.policy)); }},
                  {"continuous", "static"},
                  [](const SchedulerConfig& c) { return std::string(scheduler_policy_name(c.policy)); },
                  [](SchedulerConfig& c, const std::string& v) { c.policy = *scheduler_policy_from_name(v); }),
      Row::integer({.key = "max_running", .flag = "--max-running",
                    .help = "requests running at once at most (default: no limit)", .lowest_means = "no limit",
                    .switch_cost = kSwitchNextStep, .section = section, .label = "max running", .name = "max running",
                    .explanation = "Sequences decoded together in one step at most (vLLM's max_num_seqs)."},
                   0, 4096, [](const SchedulerConfig& c) { return int64_t{c.max_running}; },
                   [](SchedulerConfig& c, int64_t v) { c.max_running = static_cast<int32_t>(v); }),
      Row::integer({.key = "max_batch_tokens", .flag = "--max-batch-tokens",
                    .help = "tokens computed per step at most; prompts go in chunks behind decodes (default: no "
                            "limit; 1 = token by token)",
                    .step = 64, .lowest_means = "no limit", .switch_cost = kSwitchNextStep, .section = section,
                    .label = "max batch tokens", .name = "max batch tokens",
                    .explanation = "Tokens computed per step at most: long prompts are prefilled in chunks so "
                                   "decodes keep flowing."},
                   0, 1 << 24, [](const SchedulerConfig& c) { return int64_t{c.max_batch_tokens}; },
                   [](SchedulerConfig& c, int64_t v) { c.max_batch_tokens = static_cast<int32_t>(v); }),
  };
}

}  // namespace inferscope
