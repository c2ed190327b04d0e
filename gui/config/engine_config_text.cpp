#include "gui/config/engine_config_text.h"

#include <QStringList>
#include <nlohmann/json.hpp>

#include "core/kv/kv_dtype.h"

namespace inferscope::gui {
namespace {

QString text(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

}  // namespace

QString engine_config_summary(const EngineConfig& c) {
  QStringList parts;
  const bool paged = c.kv.kind == KvKind::Paged;
  parts << (paged ? QString("paged %1").arg(c.kv.block_size) : QString("contiguous"));
  parts << QString("%1 MiB").arg(static_cast<double>(c.kv.budget_bytes) / (1 << 20), 0, 'f', 0);
  if (paged && c.kv.prefix_cache) parts << "prefix cache";
  parts << QString::fromStdString(c.attention);
  parts << "KV " + text(kv_dtype_name(c.kv_dtype));
  if (c.quant != WeightQuant::Native) parts << "weights " + text(weight_quant_name(c.quant));
  parts << text(scheduler_policy_name(c.scheduler.policy));
  return parts.join(" · ");
}

nlohmann::json engine_config_json(const EngineConfig& c) {
  return {{"kv", std::string(kv_kind_name(c.kv.kind))},
          {"block_size", c.kv.block_size},
          {"kv_budget_bytes", c.kv.budget_bytes},
          {"max_seq_len", c.kv.max_seq_len},
          {"prefix_cache", c.kv.prefix_cache},
          {"kv_dtype", std::string(kv_dtype_name(c.kv_dtype))},
          {"quant", std::string(weight_quant_name(c.quant))},
          {"context_length", c.context_length},
          {"attention", c.attention},
          {"scheduler", std::string(scheduler_policy_name(c.scheduler.policy))},
          {"max_batch_tokens", c.scheduler.max_batch_tokens},
          {"max_running", c.scheduler.max_running},
          {"threads", c.threads}};
}

}  // namespace inferscope::gui
