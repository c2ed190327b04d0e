#include "gui/config/config_fields.h"

#include <QCheckBox>
#include <QComboBox>
#include <QSpinBox>

#include "core/kv/kv_dtype.h"
#include "gui/config/field_widgets.h"

namespace inferscope::gui {
namespace {

constexpr WeightQuant kQuantLevels[] = {WeightQuant::Native, WeightQuant::F32, WeightQuant::F16,
                                        WeightQuant::Q8,     WeightQuant::Q4,  WeightQuant::Q4_1,
                                        WeightQuant::Q4_K,   WeightQuant::Q6_K};

QStringList kv_dtype_choices() {
  QStringList names;
  for (const std::string& name : kv_dtype_names()) names << QString::fromStdString(name);
  return names;
}

}  // namespace

ConfigFields::ConfigFields()
    : kv_kind(combo({qtext(kv_kind_name(KvKind::Paged)), qtext(kv_kind_name(KvKind::Contiguous))})),
      block_size(combo({"8", "16", "32"})),
      attention(combo({"flash", "naive"})),
      kv_dtype(combo(kv_dtype_choices())),
      quant(combo(names_of(kQuantLevels, weight_quant_name))),
      scheduler(combo({qtext(scheduler_policy_name(SchedulerPolicy::Continuous)),
                       qtext(scheduler_policy_name(SchedulerPolicy::Static))})),
      budget_mib(spin(1, 1 << 20, 16, {}, " MiB")),
      context(spin(0, 1 << 20, 256, "model's")),
      max_running(spin(0, 4096, 1, "no limit")),
      max_batch_tokens(spin(0, 1 << 20, 64, "no limit")),
      prefix_cache(new QCheckBox("reuse cached prompt prefixes")),
      fuse(new QCheckBox("fuse Q/K/V and gate/up")) {}

std::vector<ConfigFields::Row> ConfigFields::rows() const {
  std::vector<Row> out = {
      {"KV cache", "manager", kv_kind,
       "Paged hands out fixed blocks as tokens arrive (vLLM); contiguous reserves a whole context per sequence."},
      {"KV cache", "block size", block_size, "Tokens per paged block: smaller blocks waste less in each sequence's last block."},
      {"KV cache", "budget", budget_mib, "Memory for every sequence's keys and values; when full, requests wait or are preempted."},
      {"KV cache", "context", context, "Longest conversation in tokens; contiguous mode reserves this much per sequence."},
      {"KV cache", "prefix cache", prefix_cache, "Paged: full blocks with the same prompt prefix are shared, not recomputed."},
      {"KV cache", "KV dtype", kv_dtype,
       "Precision of the cached keys and values: f32 doubles the bytes per token, q8 (Q8_0) about halves them."},
      {"Compute", "attention", attention,
       "Naive builds the whole score matrix per head; flash streams K/V tiles with an online softmax, summing in "
       "another order (close, not bit-identical)."},
      {"Compute", "operator fusion", fuse,
       "On: Q, K and V (and gate and up) run as one thread-pool dispatch each; off: one per product. Same "
       "output bit for bit; the engine is rebuilt when no reply is running."},
      {"Compute", "quantization", quant,
       "The weight format the matmuls read (native: as stored in the file); a change converts in the background."},
      {"Scheduler", "policy", scheduler,
       "Continuous: requests join and leave at every step (Orca); static: a batch runs until its longest ends."},
      {"Scheduler", "max running", max_running, "Sequences decoded together in one step at most (vLLM's max_num_seqs)."},
      {"Scheduler", "max batch tokens", max_batch_tokens,
       "Tokens computed per step at most: long prompts are prefilled in chunks so decodes keep flowing."},
  };
  for (const ToggleRow& row : spec.rows()) out.push_back(row);
  return out;
}

void ConfigFields::show(const EngineConfig& c) {
  kv_kind->setCurrentText(qtext(kv_kind_name(c.kv.kind)));
  block_size->setCurrentText(QString::number(c.kv.block_size));
  budget_mib->setValue(static_cast<int>(c.kv.budget_bytes >> 20));
  context->setValue(c.context_length);
  prefix_cache->setChecked(c.kv.prefix_cache);
  kv_dtype->setCurrentText(qtext(kv_dtype_name(c.kv_dtype)));
  attention->setCurrentText(QString::fromStdString(c.attention));
  quant->setCurrentText(qtext(weight_quant_name(c.quant)));
  fuse->setChecked(c.forward.matmul.fuse);
  scheduler->setCurrentText(qtext(scheduler_policy_name(c.scheduler.policy)));
  max_running->setValue(c.scheduler.max_running);
  max_batch_tokens->setValue(c.scheduler.max_batch_tokens);
  spec.show(c.spec);
  mark_applied();
  refresh_enabled();
}

EngineConfig ConfigFields::read(EngineConfig c) const {
  c.kv.kind = kv_kind_from_name(kv_kind->currentText().toStdString()).value_or(KvKind::Paged);
  c.kv.block_size = block_size->currentText().toInt();
  c.kv.budget_bytes = static_cast<size_t>(budget_mib->value()) << 20;
  c.context_length = context->value();
  // The contiguous reservation follows the context (resolved by the engine).
  c.kv.max_seq_len = 0;
  c.kv.prefix_cache = prefix_cache->isChecked();
  c.kv_dtype = kv_dtype_from_name(kv_dtype->currentText().toStdString()).value_or(DType::F16);
  c.attention = attention->currentText().toStdString();
  c.quant = weight_quant_from_name(quant->currentText().toStdString()).value_or(WeightQuant::Native);
  c.forward.matmul.fuse = fuse->isChecked();
  c.scheduler.policy =
      scheduler_policy_from_name(scheduler->currentText().toStdString()).value_or(SchedulerPolicy::Continuous);
  c.scheduler.max_running = max_running->value();
  c.scheduler.max_batch_tokens = max_batch_tokens->value();
  c.spec = spec.read(c.spec);
  return c;
}

void ConfigFields::refresh_enabled() {
  const bool paged = kv_kind->currentText() == qtext(kv_kind_name(KvKind::Paged));
  block_size->setEnabled(paged);
  prefix_cache->setEnabled(paged);
  spec.refresh_enabled();
}

void ConfigFields::on_change(QObject* ctx, const std::function<void()>& changed) {
  for (QComboBox* box : {kv_kind, block_size, attention, kv_dtype, quant, scheduler}) {
    QObject::connect(box, &QComboBox::currentIndexChanged, ctx, changed);
  }
  for (QCheckBox* box : {prefix_cache, fuse}) QObject::connect(box, &QCheckBox::toggled, ctx, changed);
  for (QSpinBox* box : {budget_mib, context, max_running, max_batch_tokens}) on_new_value(box, ctx, changed);
  spec.on_change(ctx, changed);
}

void ConfigFields::mark_applied() {
  for (QSpinBox* box : {budget_mib, context, max_running, max_batch_tokens}) gui::mark_applied(box);
  spec.mark_applied();
}

void ConfigFields::name_widgets(const QString& prefix) {
  const std::pair<QWidget*, const char*> names[] = {
      {kv_kind, "kv_kind"},       {block_size, "block_size"}, {budget_mib, "kv_budget_mib"},
      {context, "context"},       {prefix_cache, "prefix_cache"}, {kv_dtype, "kv_dtype"},
      {attention, "attention"},   {quant, "quantization"},    {scheduler, "scheduler"},   {fuse, "fuse"},
      {max_running, "max_running"}, {max_batch_tokens, "max_batch_tokens"}};
  for (const auto& [widget, name] : names) widget->setObjectName(prefix + name);
  spec.name_widgets(prefix);
}

}  // namespace inferscope::gui
