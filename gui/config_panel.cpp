#include "gui/config_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollArea>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>
#include <thread>

#include "core/device/device_probe.h"

namespace inferscope::gui {
namespace {

QComboBox* combo(const QStringList& items) {
  auto* box = new QComboBox;
  box->addItems(items);
  return box;
}

QSpinBox* spin(int lo, int hi, int step, const QString& special = {}, const QString& suffix = {}) {
  auto* box = new QSpinBox;
  box->setRange(lo, hi);
  box->setSingleStep(step);
  box->setSuffix(suffix);
  if (!special.isEmpty()) box->setSpecialValueText(special);
  return box;
}

// Why the CUDA device cannot be chosen in this build on this machine.
QString cuda_unavailable_reason() {
  if (!cuda_compiled_in()) return "built without CUDA (configure with INFERSCOPE_CUDA=ON)";
  const GpuProbe probe = probe_gpus();
  if (probe.gpus.empty()) return QString::fromStdString(probe.unavailable_reason);
  return QString("%1 found, but the engine has no CUDA backend yet").arg(QString::fromStdString(probe.gpus[0].name));
}

}  // namespace

ConfigPanel::ConfigPanel(QWidget* parent)
    : QWidget(parent),
      kv_kind_(combo({"paged", "contiguous"})),
      block_size_(combo({"8", "16", "32"})),
      attention_(combo({"flash", "naive"})),
      kv_dtype_(combo({"f16", "f32"})),
      quant_(combo({"native", "f32", "f16", "q8", "q4", "q4_1"})),
      scheduler_(combo({"continuous", "static"})),
      device_(combo({"CPU", "CUDA"})),
      budget_mib_(spin(1, 1 << 20, 16, {}, " MiB")),
      context_(spin(0, 1 << 20, 256, "model's")),
      max_running_(spin(0, 4096, 1, "no limit")),
      max_batch_tokens_(spin(0, 1 << 20, 64, "no limit")),
      threads_(spin(0, 1024, 1, QString("all (%1)").arg(std::thread::hardware_concurrency()))),
      prefix_cache_(new QCheckBox("reuse cached prompt prefixes")),
      result_(new QLabel) {
  auto* content = new QWidget;
  auto* column = new QVBoxLayout(content);
  column->setContentsMargins(4, 4, 4, 4);
  auto section = [&](const QString& title) {
    auto* box = new QGroupBox(title);
    auto* layout = new QVBoxLayout(box);
    layout->setSpacing(1);
    column->addWidget(box);
    return layout;
  };
  QVBoxLayout* kv = section("KV cache");
  add_row(kv, "manager", kv_kind_,
          "Paged hands out fixed blocks as tokens arrive (vLLM); contiguous reserves a whole context per sequence.");
  add_row(kv, "block size", block_size_, "Tokens per paged block: smaller blocks waste less in each sequence's last block.");
  add_row(kv, "budget", budget_mib_, "Memory for every sequence's keys and values; when full, requests wait or are preempted.");
  add_row(kv, "context", context_, "Longest conversation in tokens; contiguous mode reserves this much per sequence.");
  add_row(kv, "prefix cache", prefix_cache_, "Paged: full blocks with the same prompt prefix are shared, not recomputed.");
  add_row(kv, "KV dtype", kv_dtype_, "Precision of the cached keys and values: f32 doubles the bytes per token.");
  QVBoxLayout* compute = section("Compute");
  add_row(compute, "attention", attention_,
          "Naive builds the whole score matrix per head; flash streams K/V tiles with an online softmax.");
  add_row(compute, "quantization", quant_, "The weight format the matmuls read (native: as stored in the file).");
  add_row(compute, "threads", threads_, "Matmul worker threads; a change builds a new engine once no request runs.");
  add_row(compute, "device", device_, "Where the model runs.");
  QVBoxLayout* sched = section("Scheduler");
  add_row(sched, "policy", scheduler_,
          "Continuous: requests join and leave at every step (Orca); static: a batch runs until its longest ends.");
  add_row(sched, "max running", max_running_, "Sequences decoded together in one step at most (vLLM's max_num_seqs).");
  add_row(sched, "max batch tokens", max_batch_tokens_,
          "Tokens computed per step at most: long prompts are prefilled in chunks so decodes keep flowing.");
  column->addStretch(1);

  // Object names let tests and scripts find each toggle.
  const std::pair<QWidget*, const char*> names[] = {
      {kv_kind_, "kv_kind"},         {block_size_, "block_size"},   {budget_mib_, "kv_budget_mib"},
      {context_, "context"},         {prefix_cache_, "prefix_cache"}, {kv_dtype_, "kv_dtype"},
      {attention_, "attention"},     {quant_, "quantization"},      {threads_, "threads"},
      {device_, "device"},           {scheduler_, "scheduler"},     {max_running_, "max_running"},
      {max_batch_tokens_, "max_batch_tokens"}};
  for (const auto& [widget, name] : names) widget->setObjectName(name);

  // Quantization lands with issue 6: EngineConfig has no field for it yet.
  quant_->setEnabled(false);
  quant_->setToolTip("lands with issue 6");
  const QString cuda_reason = cuda_unavailable_reason();
  auto* devices = qobject_cast<QStandardItemModel*>(device_->model());
  devices->item(1)->setEnabled(false);
  devices->item(1)->setToolTip(cuda_reason);
  device_->setToolTip("CUDA: " + cuda_reason);

  result_->setWordWrap(true);
  result_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  result_->setMinimumHeight(32);
  result_->setAlignment(Qt::AlignTop | Qt::AlignLeft);

  auto* scroll = new QScrollArea;
  scroll->setWidget(content);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(scroll, 1);
  layout->addWidget(result_);

  for (QComboBox* box : {kv_kind_, block_size_, attention_, kv_dtype_, scheduler_}) {
    connect(box, &QComboBox::currentIndexChanged, this, &ConfigPanel::changed);
  }
  connect(prefix_cache_, &QCheckBox::toggled, this, &ConfigPanel::changed);
  for (QSpinBox* box : {budget_mib_, context_, max_running_, max_batch_tokens_, threads_}) {
    connect(box, &QSpinBox::editingFinished, this, [this, box] {
      if (box->value() != box->property("applied").toInt()) changed();
    });
  }
}

void ConfigPanel::add_row(QVBoxLayout* section, const QString& label, QWidget* field, const QString& explanation) {
  auto* row = new QHBoxLayout;
  auto* name = new QLabel(label);
  name->setMinimumWidth(96);
  row->addWidget(name);
  row->addWidget(field, 1);
  section->addLayout(row);
  auto* note = new QLabel(explanation);
  note->setWordWrap(true);
  note->setStyleSheet("color:#6b7280; font-size:8pt; margin-bottom:3px;");
  section->addWidget(note);
  field->setToolTip(explanation);
}

void ConfigPanel::set_config(const EngineConfig& c) {
  updating_ = true;
  base_ = c;
  kv_kind_->setCurrentText(c.kv.kind == KvKind::Paged ? "paged" : "contiguous");
  block_size_->setCurrentText(QString::number(c.kv.block_size));
  budget_mib_->setValue(static_cast<int>(c.kv.budget_bytes >> 20));
  context_->setValue(c.context_length);
  prefix_cache_->setChecked(c.kv.prefix_cache);
  kv_dtype_->setCurrentText(c.kv_dtype == DType::F32 ? "f32" : "f16");
  attention_->setCurrentText(QString::fromStdString(c.attention));
  scheduler_->setCurrentText(c.scheduler.policy == SchedulerPolicy::Static ? "static" : "continuous");
  max_running_->setValue(c.scheduler.max_running);
  max_batch_tokens_->setValue(c.scheduler.max_batch_tokens);
  threads_->setValue(c.threads);
  for (QSpinBox* box : {budget_mib_, context_, max_running_, max_batch_tokens_, threads_}) {
    box->setProperty("applied", box->value());
  }
  refresh_enabled();
  updating_ = false;
}

EngineConfig ConfigPanel::config() const {
  EngineConfig c = base_;
  c.kv.kind = kv_kind_->currentText() == "paged" ? KvKind::Paged : KvKind::Contiguous;
  c.kv.block_size = block_size_->currentText().toInt();
  c.kv.budget_bytes = static_cast<size_t>(budget_mib_->value()) << 20;
  c.context_length = context_->value();
  // The contiguous reservation follows the context (resolved by the engine).
  c.kv.max_seq_len = 0;
  c.kv.prefix_cache = prefix_cache_->isChecked();
  c.kv_dtype = kv_dtype_->currentText() == "f32" ? DType::F32 : DType::F16;
  c.attention = attention_->currentText().toStdString();
  c.scheduler.policy = scheduler_->currentText() == "static" ? SchedulerPolicy::Static : SchedulerPolicy::Continuous;
  c.scheduler.max_running = max_running_->value();
  c.scheduler.max_batch_tokens = max_batch_tokens_->value();
  c.threads = threads_->value();
  return c;
}

void ConfigPanel::show_result(bool applied, const QString& message) {
  result_->setStyleSheet(applied ? "color:#065f46; background:#ecfdf5; padding:4px;"
                                 : "color:#b91c1c; background:#fef2f2; padding:4px;");
  result_->setText(message);
}

QString ConfigPanel::result_text() const { return result_->text(); }

void ConfigPanel::refresh_enabled() {
  const bool paged = kv_kind_->currentText() == "paged";
  block_size_->setEnabled(paged);
  prefix_cache_->setEnabled(paged);
}

void ConfigPanel::changed() {
  refresh_enabled();
  if (updating_) return;
  const EngineConfig c = config();
  for (QSpinBox* box : {budget_mib_, context_, max_running_, max_batch_tokens_, threads_}) {
    box->setProperty("applied", box->value());
  }
  base_ = c;
  emit apply_requested(c);
}

}  // namespace inferscope::gui
