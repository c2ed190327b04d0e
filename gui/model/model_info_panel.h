// The Model tab: what the loaded GGUF file holds (as `inferscope-cli inspect` prints it):
// hyperparameters, sizes, the tokenizer, tensor types with their bytes, every tensor, and what the KV
// cache costs per token (2 x bytes x layers x KV heads x head dim); and the format each matrix has at
// the quantization level the engine runs (the per-tensor policy of core/quant/weight_quant.h).
#pragma once
#include <QString>
#include <QWidget>
#include <optional>

#include "core/quant/weight_quant.h"
#include "kernels/format/dtype.h"

class QLabel;
class QTreeWidget;
class QTreeWidgetItem;

namespace inferscope {
class LlamaModel;
}

namespace inferscope::gui {

// "SmolLM2 135M Instruct · 135M params · 93 MiB · KV 23 KiB/token" for the window's top bar.
QString model_summary(const LlamaModel& model, DType kv_dtype);
// "90.0 MiB", "22.5 KiB", "512 B".
QString format_bytes(double bytes);

class ModelInfoPanel : public QWidget {
  Q_OBJECT
 public:
  explicit ModelInfoPanel(QWidget* parent = nullptr);
  void show_model(const LlamaModel& model, DType kv_dtype);
  // The "Weights at <level>" section: each stored format's tensors and bytes, the fallbacks, and every
  // matrix's format. Rebuilt only when the level differs from the one shown.
  void show_level(const LlamaModel& model, WeightQuant level);
  void clear();
  QTreeWidget* tree() const { return tree_; }
  // The notice under the title when the chat template was guessed (LlamaModel::chat_template_notice), "" else.
  QString notice() const;

 private:
  QLabel *title_, *notice_;
  QTreeWidget* tree_;
  QTreeWidgetItem* level_section_ = nullptr;  // owned by tree_
  std::optional<WeightQuant> shown_level_;
};

}  // namespace inferscope::gui
