#include "core/kv/kv_config.h"

#include <algorithm>

#include <stdexcept>
#include <string>

#include "core/kv/contiguous_kv_cache.h"
#include "core/kv/paged_kv_cache.h"

namespace inferscope {

size_t kv_budget_for_sequences(const KvGeometry& geometry, const KvConfig& config, int32_t sequences) {
  const size_t block = config.kind == KvKind::Paged ? static_cast<size_t>(std::max(1, config.block_size)) : 1;
  const size_t slots = (static_cast<size_t>(std::max(0, config.max_seq_len)) + block - 1) / block * block;
  return geometry.bytes_per_token() * slots * static_cast<size_t>(std::max(1, sequences));
}

std::unique_ptr<KvCache> make_kv_cache(const KvGeometry& geometry, const KvConfig& config) {
  if (config.kind == KvKind::Contiguous) {
    return std::make_unique<ContiguousKvCache>(geometry, config.max_seq_len, config.budget_bytes);
  }
  return std::make_unique<PagedKvCache>(geometry, config.block_size, config.budget_bytes, config.prefix_cache);
}

std::vector<SettingRow<KvConfig>> kv_config_settings() {
  using Row = SettingRow<KvConfig>;
  const std::string section = "KV cache";
  const auto paged = [](const KvConfig& c) { return c.kind == KvKind::Paged; };
  return {
      Row::choice({.key = "kv", .flag = "--kv",
                   .help = "KV cache manager: paged (default, PagedAttention blocks) | contiguous (one reservation per "
                           "sequence)",
                   .switch_cost = kSwitchNewCache, .section = section, .label = "manager", .name = "KV",
                   .explanation = "Paged hands out fixed blocks as tokens arrive (vLLM); contiguous reserves a whole "
                                  "context per sequence.",
                   .summary = [](const KvConfig& c) {
                     return c.kind == KvKind::Paged ? "paged " + std::to_string(c.block_size) : std::string("contiguous");
                   }},
                  {"paged", "contiguous"}, [](const KvConfig& c) { return std::string(kv_kind_name(c.kind)); },
                  [](KvConfig& c, const std::string& v) { c.kind = *kv_kind_from_name(v); }),
      Row::choice({.key = "block_size", .flag = "--block-size", .help = "paged KV: tokens per block, 8 | 16 (default) | 32",
                   .switch_cost = kSwitchNewCache, .section = section, .label = "block size", .name = "block size",
                   .explanation = "Tokens per paged block: smaller blocks waste less in each sequence's last block.",
                   .applies = paged, .applies_when = "--kv paged"},
                  {"8", "16", "32"}, [](const KvConfig& c) { return std::to_string(c.block_size); },
                  [](KvConfig& c, const std::string& v) { c.block_size = std::stoi(v); }),
      Row::integer({.key = "kv_budget_mib", .flag = "--kv-budget-mib",
                    .help = "KV cache memory in MiB (default: room for the full context)", .step = 16,
                    .lowest_means = "auto", .unit = " MiB", .switch_cost = kSwitchNewCache, .section = section,
                    .label = "budget", .name = "KV budget",
                    .explanation = "Memory for every sequence's keys and values; when full, requests wait or are "
                                   "preempted. auto: room for four full-context sequences (one on the command line).",
                    .summary = [](const KvConfig& c) {
                      return format_number(static_cast<double>(c.budget_bytes) / (1 << 20), "%.0f MiB");
                    }},
                   0, 1 << 20, [](const KvConfig& c) { return static_cast<int64_t>(c.budget_bytes >> 20); },
                   [](KvConfig& c, int64_t v) { c.budget_bytes = static_cast<size_t>(v) << 20; }),
      Row::on_off({.key = "prefix_cache", .flag = "--prefix-cache",
                   .help = "paged KV: reuse cached blocks of identical prompt prefixes, on (default) | off",
                   .switch_cost = kSwitchNewCache, .section = section, .label = "prefix cache", .name = "prefix cache",
                   .explanation = "Paged: full blocks with the same prompt prefix are shared, not recomputed.",
                   .switch_text = "reuse cached prompt prefixes", .applies = paged, .applies_when = "--kv paged",
                   .summary = [paged](const KvConfig& c) {
                     return std::string(paged(c) && c.prefix_cache ? "prefix cache" : "");
                   }},
                  [](const KvConfig& c) { return c.prefix_cache; }, [](KvConfig& c, bool v) { c.prefix_cache = v; }),
  };
}

}  // namespace inferscope
