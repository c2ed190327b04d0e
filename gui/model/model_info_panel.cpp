#include "gui/model/model_info_panel.h"

#include <QHeaderView>
#include <QLabel>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <map>

#include "core/gguf/gguf_file.h"
#include "core/model/llama_model.h"
#include "core/quant/quant_plan.h"
#include "gui/model/template_notice.h"

namespace inferscope::gui {
namespace {

QString text(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

QString dims_text(const std::vector<int64_t>& dims) {
  QStringList parts;
  for (int64_t d : dims) parts << QString::number(d);
  return parts.join(" × ");
}

QTreeWidgetItem* section(QTreeWidget* tree, const QString& title) {
  auto* item = new QTreeWidgetItem(tree, {title});
  QFont bold = item->font(0);
  bold.setBold(true);
  item->setFont(0, bold);
  item->setExpanded(true);
  return item;
}

void row(QTreeWidgetItem* parent, const QString& name, const QString& value, const QString& tip = {}) {
  auto* item = new QTreeWidgetItem(parent, {name, value});
  if (!tip.isEmpty()) {
    item->setToolTip(0, tip);
    item->setToolTip(1, tip);
  }
}

// A format's row: how many tensors it holds, and their bytes in the bytes column.
void tensor_count_row(QTreeWidgetItem* parent, const QString& format, int tensors, size_t bytes) {
  new QTreeWidgetItem(parent, {format, QString("%1 %2").arg(tensors).arg(tensors == 1 ? "tensor" : "tensors"), QString(),
                               format_bytes(static_cast<double>(bytes))});
}

}  // namespace

QString ModelInfoPanel::notice() const { return notice_->isHidden() ? QString() : notice_->text(); }

QString format_bytes(double bytes) {
  if (bytes >= 1 << 30) return QString("%1 GiB").arg(bytes / (1 << 30), 0, 'f', 2);
  if (bytes >= 1 << 20) return QString("%1 MiB").arg(bytes / (1 << 20), 0, 'f', 1);
  if (bytes >= 1 << 10) return QString("%1 KiB").arg(bytes / (1 << 10), 0, 'f', 1);
  return QString("%1 B").arg(bytes, 0, 'f', 0);
}

QString model_summary(const LlamaModel& model, DType kv_dtype) {
  const double params = static_cast<double>(model.parameter_count());
  const QString count = params >= 1e9 ? QString("%1B").arg(params / 1e9, 0, 'f', 1)
                                      : QString("%1M").arg(params / 1e6, 0, 'f', 0);
  return QString("%1 · %2 params · %3 · KV %4/token")
      .arg(QString::fromStdString(model.config().name), count,
           format_bytes(static_cast<double>(model.weights().matrix_bytes())),
           format_bytes(static_cast<double>(model.kv_geometry(kv_dtype).bytes_per_token())));
}

ModelInfoPanel::ModelInfoPanel(QWidget* parent)
    : QWidget(parent), title_(new QLabel), notice_(template_notice_label()), tree_(new QTreeWidget) {
  title_->setStyleSheet("font-size:13pt; font-weight:bold; padding:4px;");
  title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  tree_->setColumnCount(4);
  tree_->setHeaderLabels({"", "value (tensors: type)", "dims", "bytes"});
  tree_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  tree_->setAlternatingRowColors(true);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(title_);
  layout->addWidget(notice_);
  layout->addWidget(tree_, 1);
  clear();
}

void ModelInfoPanel::clear() {
  title_->setText("No model loaded (File ▸ Open model…, or drop a .gguf file on the window)");
  show_template_notice(*notice_, {});
  tree_->clear();
  level_section_ = nullptr;
  shown_level_.reset();
}

void ModelInfoPanel::show_model(const LlamaModel& model, DType kv_dtype) {
  const LlamaConfig& c = model.config();
  const GgufFile& file = model.file();
  title_->setText(model_summary(model, kv_dtype));
  const std::string notice = model.chat_template_notice();
  show_template_notice(*notice_, notice);
  tree_->clear();
  level_section_ = nullptr;
  shown_level_.reset();

  QTreeWidgetItem* f = section(tree_, "File");
  row(f, "path", QString::fromStdString(file.path()));
  if (!c.name_in_file.empty()) row(f, "name in the file", QString::fromStdString(c.name_in_file), "general.name");
  row(f, "format", QString("GGUF v%1, %2").arg(file.version()).arg(format_bytes(static_cast<double>(file.file_size()))));
  row(f, "architecture", QString::fromStdString(c.architecture));
  for (const std::string& line : c.differences()) row(f, "differs from Llama", QString::fromStdString(line));
  row(f, "chat template",
      text(chat_family_name(model.chat_template().family)) + (notice.empty() ? QString() : QString(" (guessed)")),
      QString::fromStdString(notice));

  QTreeWidgetItem* h = section(tree_, "Hyperparameters");
  row(h, "n_layers", QString::number(c.n_layers), "Transformer blocks");
  row(h, "dim", QString::number(c.dim), "Width of the residual stream");
  row(h, "n_heads", QString::number(c.n_heads), "Query heads per layer");
  row(h, "n_kv_heads", QString::number(c.n_kv_heads), "Key/value heads per layer (fewer than n_heads: grouped-query attention)");
  row(h, "head_dim", QString::number(c.head_dim));
  row(h, "ffn_dim", QString::number(c.ffn_dim), "Hidden width of the SwiGLU feed-forward");
  row(h, "vocab_size", QString::number(c.vocab_size));
  row(h, "context_length", QString::number(c.context_length), "The longest context the model was trained for");
  row(h, "rope_freq_base", QString::number(c.rope_freq_base));
  row(h, "rope_freq_scale", QString::number(c.rope_freq_scale));
  row(h, "rms_eps", QString::number(c.rms_eps));
  row(h, "tied_output", c.tied_output ? "yes" : "no", "The classifier reuses the token embedding matrix");

  QTreeWidgetItem* s = section(tree_, "Memory");
  const KvGeometry kv = model.kv_geometry(kv_dtype);
  const double per_token = static_cast<double>(kv.bytes_per_token());
  row(s, "parameters", QLocale().toString(static_cast<qlonglong>(model.parameter_count())));
  row(s, "weight bytes", format_bytes(static_cast<double>(model.weights().matrix_bytes())),
      "Bytes of the 2-D weights: what every decode step streams from memory");
  row(s, "KV bytes / token",
      QString("%1  = 2 (K and V) × %2 layers × %3 KV heads × %4 B (head dim %5 in %6)")
          .arg(format_bytes(per_token))
          .arg(kv.n_layers)
          .arg(kv.n_kv_heads)
          .arg(kv.row_bytes())
          .arg(kv.head_dim)
          .arg(text(dtype_name(kv_dtype))),
      QString("Keys and values of one token in every layer, in %1").arg(text(dtype_name(kv_dtype))));
  row(s, "KV at full context", format_bytes(per_token * c.context_length),
      QString("One sequence of %1 tokens").arg(c.context_length));
  if (const int32_t local = c.windowed_layers(); local > 0) {
    // per layer and token, the local layers counted for at most the window's tokens
    const int64_t kept = int64_t{c.n_layers - local} * c.context_length + int64_t{local} * std::min(c.sliding_window, c.context_length);
    row(s, "KV with the window",
        QString("%1: local layers keep at most %2 tokens (%3 of %4 layers)")
            .arg(format_bytes(per_token / c.n_layers * static_cast<double>(kept)))
            .arg(c.sliding_window)
            .arg(local)
            .arg(c.n_layers),
        QString("The local layers attend only to the last %1 tokens, so a sequence of %2 tokens needs at most %1 of "
                "them there. This cache still keeps every position (the KV blocks view marks the blocks outside the window).")
            .arg(c.sliding_window)
            .arg(c.context_length));
  }

  const Vocab& v = model.tokenizer().vocab();
  QTreeWidgetItem* t = section(tree_, "Tokenizer");
  row(t, "model", QString::fromStdString(v.model) + (v.pre.empty() ? "" : " (pre: " + QString::fromStdString(v.pre) + ")"));
  row(t, "tokens", QString::number(v.size()));
  row(t, "bos / eos / eot", QString("%1 / %2 / %3").arg(v.bos).arg(v.eos).arg(v.eot));

  // Tensor types: how many tensors and bytes each stored format holds.
  std::map<std::string, std::pair<int, size_t>> by_type;
  for (const GgufTensorInfo& info : file.tensors()) {
    auto& [count, bytes] = by_type[std::string(dtype_name(info.type))];
    ++count;
    bytes += info.n_bytes;
  }
  QTreeWidgetItem* types = section(tree_, "Tensor types");
  for (const auto& [type, stats] : by_type) {
    tensor_count_row(types, QString::fromStdString(type), stats.first, stats.second);
  }
  QTreeWidgetItem* all = section(tree_, QString("Tensors (%1)").arg(file.tensors().size()));
  all->setExpanded(false);
  for (const GgufTensorInfo& info : file.tensors()) {
    new QTreeWidgetItem(all, {QString::fromStdString(info.name), text(dtype_name(info.type)), dims_text(info.dims),
                              format_bytes(static_cast<double>(info.n_bytes))});
  }
}

void ModelInfoPanel::show_level(const LlamaModel& model, WeightQuant level) {
  if (shown_level_ == level) return;
  shown_level_ = level;
  delete level_section_;
  const std::vector<TensorFormat> plan = plan_formats(model.file(), level);
  level_section_ = section(tree_, QString("Weights at %1").arg(text(weight_quant_name(level))));
  level_section_->setToolTip(0, "The format each matrix has at the level the engine runs: llama.cpp's per-tensor "
                                "policy, with its fallbacks for rows that are not whole blocks");
  for (const FormatTotal& t : format_totals(plan)) {
    tensor_count_row(level_section_, QString::fromStdString(t.type), t.tensors, t.bytes);
  }
  const std::vector<MatrixFallback> fallbacks = fallbacks_of(plan);
  if (!fallbacks.empty()) {
    row(level_section_, "fallbacks", QString::fromStdString(fallback_summary(fallbacks)),
        "Rows that are not whole blocks of the wanted format get llama.cpp's fallback format");
  }
  auto* all = new QTreeWidgetItem(level_section_, {QString("Every matrix (%1)").arg(plan.size())});
  for (const TensorFormat& t : plan) {
    QString format = text(dtype_name(t.source)) + " → " + text(dtype_name(t.format.stored));
    if (t.format.fallback()) format += QString(" (%1 wanted)").arg(text(dtype_name(t.format.wanted)));
    new QTreeWidgetItem(all, {QString::fromStdString(t.name), format, dims_text({t.cols, t.rows}),
                              format_bytes(static_cast<double>(t.bytes()))});
  }
}

}  // namespace inferscope::gui
