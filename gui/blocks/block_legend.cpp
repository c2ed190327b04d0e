#include "gui/blocks/block_legend.h"

#include <QPainter>
#include <algorithm>

#include "gui/blocks/block_paint.h"

using inferscope::KvSnapshot;
using namespace inferscope::gui;

namespace {

constexpr int kSample = 16, kItemGap = 14, kLine = 20;
const QColor kSampleColor(31, 119, 180);  // the first sequence colour, as a stand-in for any

KvSnapshot::Block sample_block(int32_t filled, int32_t ref_count, bool cached) {
  KvSnapshot::Block b;
  b.filled = filled;
  b.ref_count = ref_count;
  b.cached = cached;
  for (int32_t i = 0; i < ref_count; ++i) b.owners.push_back(i);
  return b;
}

}  // namespace

BlockLegend::BlockLegend(QWidget* parent) : QWidget(parent) {
  setMinimumHeight(kLine + 4);
  // The labels are short; what each sample means in full is said on hover.
  setToolTip(tr("Paged: a block's colour is the sequence that owns it; its pale slots are empty (a partly filled "
                "last block); stripes of several colours mean a block shared by sequences (ref count > 1, a common "
                "prompt prefix); grey hatching is a cached block no sequence holds, reusable by a request with the "
                "same prefix; blank is free; a crossed block lies outside the local layers' sliding window.\n"
                "Contiguous: each bar is one request's reservation: the filled part is used, the hatched part reserved "
                "but unused (waste); a blank bar is a free region."));
}

void BlockLegend::set_window(bool window) {
  if (window == window_) return;
  window_ = window;
  setMinimumHeight(lay_out(nullptr));
  update();
}

void BlockLegend::set_contiguous(bool contiguous) {
  if (contiguous == contiguous_) return;
  contiguous_ = contiguous;
  setMinimumHeight(lay_out(nullptr));
  update();
}

int BlockLegend::lay_out(QPainter* p) {
  struct Item {
    KvSnapshot::Block block;
    std::vector<QColor> colors;
    QString text;
    bool outside_window = false;
  };
  constexpr int32_t kSize = 4;  // the sample blocks' slot count
  std::vector<Item> items;
  if (contiguous_) {
    items = {{sample_block(kSize, 1, false), {kSampleColor}, tr("used by its sequence")},
             {sample_block(0, 1, false), {kSampleColor}, tr("reserved but unused (waste)")},
             {sample_block(0, 0, false), {}, tr("free region")}};
  } else {
    items = {{sample_block(kSize, 1, false), {kSampleColor}, tr("full block")},
             {sample_block(kSize / 2, 1, false), {kSampleColor}, tr("partly filled")},
             {sample_block(kSize, 2, false), {kSampleColor, QColor(255, 127, 14)}, tr("shared (refs > 1)")},
             {sample_block(kSize, 0, true), {}, tr("cached, free")},
             {sample_block(0, 0, false), {}, tr("free")}};
    if (window_) items.push_back({sample_block(kSize, 1, false), {kSampleColor}, tr("outside the window"), true});
  }
  const QFontMetrics fm(font());
  int x = 4, y = 2, line_height = kLine;
  for (const Item& item : items) {
    const int sample_w = contiguous_ && !item.colors.empty() ? kSample * 3 : kSample;
    const int w = sample_w + 5 + fm.horizontalAdvance(item.text) + 2;  // +2: boundingRect may round up by a pixel
    if (x > 4 && x + w > width()) x = 4, y += line_height, line_height = kLine;  // wrap to the next line
    // An item wider than a whole line wraps its words under one another, never past the edge.
    const int text_w = std::max(1, std::min(w, width() - 4 - x) - sample_w - 5);
    const QRect text = fm.boundingRect(QRect(0, 0, text_w, 1000), Qt::TextWordWrap, item.text);
    const int item_h = std::max(kLine, text.height() + 2);
    if (p) {
      const QRectF sample(x, y + (kLine - kSample) / 2.0, sample_w, kSample);
      if (contiguous_) paint_region(*p, sample, item.block, kSize, item.colors.empty() ? QColor() : item.colors[0], false);
      else paint_block(*p, sample, item.block, kSize, item.colors);
      if (item.outside_window) paint_outside_window(*p, sample);
      p->setPen(palette().color(QPalette::Text));
      p->drawText(QRect(x + sample_w + 5, y, text_w, item_h), Qt::AlignVCenter | Qt::AlignLeft | Qt::TextWordWrap, item.text);
    }
    line_height = std::max(line_height, item_h);
    x += std::min(w, width() - 4 - x) + kItemGap;
  }
  return y + line_height + 2;
}

void BlockLegend::paintEvent(QPaintEvent*) {
  QPainter p(this);
  lay_out(&p);
}

void BlockLegend::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  setMinimumHeight(lay_out(nullptr));
}
