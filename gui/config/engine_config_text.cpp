#include "gui/config/engine_config_text.h"

#include <QStringList>

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

}  // namespace inferscope::gui
