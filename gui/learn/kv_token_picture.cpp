#include "gui/learn/kv_token_picture.h"

#include <QPainter>
#include <algorithm>

namespace inferscope::gui {
namespace {

const QColor kKey(31, 119, 180), kValue(255, 127, 14), kToken(55, 65, 81);
constexpr int kMargin = 12, kTokenWidth = 70, kRowHeight = 12, kLabelHeight = 18;

}  // namespace

KvTokenPicture::KvTokenPicture(const KvTokenShape& shape, QWidget* parent) : QWidget(parent), shape_(shape) {
  setMinimumHeight(sizeHint().height());
}

QString KvTokenPicture::formula() const {
  const double values = 2.0 * shape_.layers * shape_.kv_heads * shape_.head_dim;
  const double bytes_per_value = values > 0 ? static_cast<double>(shape_.bytes_per_token) / values : 0;
  QString text = QString("2 (K and V) × %1 layers × %2 KV heads × %3 values × %4 bytes = %5 bytes for this token")
                     .arg(shape_.layers)
                     .arg(shape_.kv_heads)
                     .arg(shape_.head_dim)
                     .arg(bytes_per_value, 0, 'g', 4)
                     .arg(shape_.bytes_per_token);
  if (shape_.window > 0) {
    text += QString("; the %1 local layers keep at most %2 tokens (their sliding window)").arg(shape_.local_layers).arg(shape_.window);
  }
  return text;
}

QSize KvTokenPicture::sizeHint() const {
  // Two rows of KV heads (K above V) per layer, the layer labels and the formula.
  return {720, 2 * kMargin + 2 * std::max(1, shape_.kv_heads) * kRowHeight + 8 + 3 * kLabelHeight};
}

void KvTokenPicture::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  p.fillRect(rect(), Qt::white);
  const int heads = std::max(1, shape_.kv_heads);
  const int layers = std::max(1, shape_.layers);
  const int top = kMargin + kLabelHeight;
  // The rows grow into the height the widget has, up to twice their least size.
  const int room = height() - 2 * kMargin - 3 * kLabelHeight - 8;
  const int row_height = std::clamp(room / (2 * heads), kRowHeight, 2 * kRowHeight);
  const int block_height = heads * row_height;  // one K (or V) block: a row per KV head
  const int middle = top + block_height + 4;
  // The new token on the left, an arrow into the layers.
  const QRect token(kMargin, middle - 14, kTokenWidth, 28);
  p.setPen(Qt::NoPen);
  p.setBrush(kToken);
  p.drawRoundedRect(token, 6, 6);
  p.setPen(Qt::white);
  p.drawText(token, Qt::AlignCenter, tr("new token"));
  const int left = token.right() + 44;
  p.setPen(QPen(kToken, 2));
  p.drawLine(token.right() + 4, middle, left - 22, middle);
  p.drawLine(left - 22, middle, left - 28, middle - 5);
  p.drawLine(left - 22, middle, left - 28, middle + 5);
  // One column per layer: K rows (one per KV head) above V rows.
  const int span = width() - left - kMargin;
  const double column = static_cast<double>(span) / layers;
  const int cell = std::max(2, static_cast<int>(column) - 2);
  for (int l = 0; l < layers; ++l) {
    const int x = left + static_cast<int>(l * column);
    for (int h = 0; h < heads; ++h) {
      p.fillRect(x, top + h * row_height, cell, row_height - 2, kKey);
      p.fillRect(x, top + block_height + 8 + h * row_height, cell, row_height - 2, kValue);
    }
  }
  // Labels: K and V beside their rows, the first and last layer, and the formula.
  const QFontMetrics fm(font());
  p.setPen(kKey);
  p.drawText(left - 16, top + block_height / 2 + fm.ascent() / 2, "K");
  p.setPen(kValue);
  p.drawText(left - 16, top + block_height + 8 + block_height / 2 + fm.ascent() / 2, "V");
  p.setPen(kToken);
  p.drawText(left, kMargin + fm.ascent(), tr("layer 1"));
  const QString last = tr("layer %1").arg(layers);
  p.drawText(left + span - fm.horizontalAdvance(last), kMargin + fm.ascent(), last);
  const int bottom = top + 2 * block_height + 8;
  QString key = tr("K: %1 KV heads × %2 values per layer").arg(heads).arg(shape_.head_dim);
  if (shape_.query_heads > heads) key += tr(" (each KV head serves %1 query heads)").arg(shape_.query_heads / heads);
  p.setPen(kKey);
  p.drawText(kMargin, bottom + kLabelHeight, key);
  p.setPen(kValue);
  p.drawText(kMargin + fm.horizontalAdvance(key) + 24, bottom + kLabelHeight, tr("V: the same shape"));
  p.setPen(kToken);
  p.drawText(kMargin, bottom + 2 * kLabelHeight, formula());
}

}  // namespace inferscope::gui
