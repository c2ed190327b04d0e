// The KV cache experiment's picture: one new token entering the model and leaving a K row and a V
// row per KV head at every layer, drawn with the loaded model's layer and head counts, and the bytes
// that adds under it (2 × layers × KV heads × head dim × bytes per value).
#pragma once
#include <QWidget>
#include <cstddef>
#include <cstdint>

namespace inferscope::gui {

struct KvTokenShape {
  int32_t layers = 0, kv_heads = 0, query_heads = 0, head_dim = 0;
  size_t bytes_per_token = 0;  // K and V of one token over every layer, as the cache stores them
  int32_t window = 0, local_layers = 0;  // a sliding window and the layers it holds for (0: none)
};

class KvTokenPicture : public QWidget {
 public:
  explicit KvTokenPicture(const KvTokenShape& shape, QWidget* parent = nullptr);
  // The line under the picture: the formula with this model's numbers and its total, and what a
  // sliding window bounds.
  QString formula() const;
  QSize sizeHint() const override;

 protected:
  void paintEvent(QPaintEvent*) override;

 private:
  KvTokenShape shape_;
};

}  // namespace inferscope::gui
