#include "gui/config/engine_config_text.h"

#include <QStringList>
#include <nlohmann/json.hpp>

#include "core/kv/kv_dtype.h"
#include "gui/config/field_widgets.h"

namespace inferscope::gui {

QString engine_config_summary(const EngineConfig& c) {
  QStringList parts;
  const bool paged = c.kv.kind == KvKind::Paged;
  parts << (paged ? QString("paged %1").arg(c.kv.block_size) : QString("contiguous"));
  parts << QString("%1 MiB").arg(static_cast<double>(c.kv.budget_bytes) / (1 << 20), 0, 'f', 0);
  if (paged && c.kv.prefix_cache) parts << "prefix cache";
  parts << QString::fromStdString(c.attention);
  parts << "KV " + qtext(kv_dtype_name(c.kv_dtype));
  if (c.quant != WeightQuant::Native) parts << "weights " + qtext(weight_quant_name(c.quant));
  if (!c.forward.matmul.fuse) parts << "unfused";
  parts << qtext(scheduler_policy_name(c.scheduler.policy));
  if (c.spec.enabled()) parts << QString::fromStdString(describe_spec(c.spec));
  return parts.join(" · ");
}

std::vector<std::pair<std::string, nlohmann::json>> engine_config_settings(const EngineConfig& c) {
  return {{"kv", std::string(kv_kind_name(c.kv.kind))},
          {"block_size", c.kv.block_size},
          {"kv_budget_bytes", c.kv.budget_bytes},
          {"max_seq_len", c.kv.max_seq_len},
          {"context_length", c.context_length},
          {"prefix_cache", c.kv.prefix_cache},
          {"kv_dtype", std::string(kv_dtype_name(c.kv_dtype))},
          {"attention", c.attention},
          {"quant", std::string(weight_quant_name(c.quant))},
          {"scheduler", std::string(scheduler_policy_name(c.scheduler.policy))},
          {"max_running", c.scheduler.max_running},
          {"max_batch_tokens", c.scheduler.max_batch_tokens},
          {"threads", c.threads},
          {"fuse", c.forward.matmul.fuse},
          {"spec",
           {{"mode", std::string(spec_mode_name(c.spec.mode))},
            {"k", spec_k_name(c.spec.k)},
            {"ngram_min", c.spec.ngram_min},
            {"ngram_max", c.spec.ngram_max},
            {"draft_p_min", c.spec.draft_p_min},
            {"draft_model", c.spec.draft_model},
            {"draft_quant", std::string(weight_quant_name(c.spec.draft_quant))},
            {"draft_layers", c.spec.draft_layers}}}};
}

nlohmann::json engine_config_json(const EngineConfig& c) {
  nlohmann::json j = nlohmann::json::object();
  for (auto& [name, value] : engine_config_settings(c)) j[name] = std::move(value);
  return j;
}

}  // namespace inferscope::gui
