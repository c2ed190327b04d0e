#include "gui/blocks/block_grid.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>

#include "gui/blocks/block_paint.h"

using inferscope::KvSnapshot;
using inferscope::SeqId;
using namespace inferscope::gui;

namespace {

const QColor kSelectionEdge(0, 0, 0), kHoverEdge(255, 200, 0), kDim(255, 255, 255, 165);

// After a cell or bar is painted: dims it when another sequence is selected, outlines it when it
// belongs to the selected one, and rings it when the mouse is over it.
void mark(QPainter& p, const QRect& r, bool selection_active, bool selected, bool hovered) {
  if (selection_active && !selected) p.fillRect(r, kDim);
  p.setBrush(Qt::NoBrush);
  for (const auto& [on, color] : {std::pair{selection_active && selected, kSelectionEdge}, std::pair{hovered, kHoverEdge}}) {
    if (!on) continue;
    p.setPen(QPen(color, 2));
    p.drawRect(QRectF(r).adjusted(-1, -1, 1, 1));
  }
}

}  // namespace

BlockGrid::BlockGrid(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setAttribute(Qt::WA_OpaquePaintEvent);
}

void BlockGrid::set_snapshot(const KvSnapshot& snapshot, std::map<SeqId, QColor> colors) {
  const bool reshaped = snapshot.kind != snapshot_.kind || snapshot.blocks.size() != snapshot_.blocks.size();
  snapshot_ = snapshot;
  colors_ = std::move(colors);
  if (reshaped) relayout();
  measure_captions();
  update();
}

void BlockGrid::set_selected(SeqId seq) {
  selected_ = seq;
  update();
}

void BlockGrid::set_region_labels(std::map<SeqId, QString> labels) {
  region_labels_ = std::move(labels);
  measure_captions();
  update();
}

void BlockGrid::set_outside_window(std::vector<bool> outside) {
  outside_window_ = std::move(outside);
  update();
}

bool BlockGrid::outside_window(int32_t block) const {
  return block >= 0 && static_cast<size_t>(block) < outside_window_.size() && outside_window_[block];
}

void BlockGrid::set_fit_height(int height) {
  if (height == fit_height_) return;
  fit_height_ = height;
  relayout();
}

void BlockGrid::relayout() {
  const int n = static_cast<int>(snapshot_.blocks.size());
  const int avail_w = std::max(1, width() - 2 * kMargin), avail_h = std::max(1, fit_height_ - 2 * kMargin);
  int needed_h = 0;
  if (contiguous()) {
    // The tallest rows (with a 4 px gap) that fit every region in view, at least kMinRow.
    row_ = kMinRow;
    for (int r = kMaxRow; r >= kMinRow; --r)
      if (n * (r + 4) <= avail_h) {
        row_ = r;
        break;
      }
    needed_h = n * (row_ + 4);
  } else {
    // The largest cells that fit every block in view, at least kMinCell (then the grid scrolls).
    cell_ = kMinCell;
    for (int c = kMaxCell; c >= kMinCell; --c) {
      const int gap = c >= 16 ? 2 : 1;
      const int cols = std::max(1, (avail_w + gap) / (c + gap));
      if ((n + cols - 1) / cols * (c + gap) <= avail_h) {
        cell_ = c;
        break;
      }
    }
    gap_ = cell_ >= 16 ? 2 : 1;
    columns_ = std::max(1, (avail_w + gap_) / (cell_ + gap_));
    needed_h = (n + columns_ - 1) / columns_ * (cell_ + gap_);
  }
  setMinimumHeight(needed_h + 2 * kMargin);
  measure_captions();
  update();
}

void BlockGrid::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  relayout();
}

QRect BlockGrid::block_rect(int32_t block) const {
  if (block < 0 || static_cast<size_t>(block) >= snapshot_.blocks.size()) return {};
  if (contiguous())
    return QRect(kMargin + caption_w_, kMargin + block * (row_ + 4), width() - 2 * kMargin - caption_w_, row_);
  return QRect(kMargin + (block % columns_) * (cell_ + gap_), kMargin + (block / columns_) * (cell_ + gap_), cell_, cell_);
}

int32_t BlockGrid::block_at(QPoint pos) const {
  const int n = static_cast<int>(snapshot_.blocks.size());
  int32_t candidate = -1;
  if (contiguous()) {
    candidate = (pos.y() - kMargin) / (row_ + 4);
  } else {
    if (pos.x() < kMargin || pos.y() < kMargin) return -1;
    const int col = (pos.x() - kMargin) / (cell_ + gap_), row = (pos.y() - kMargin) / (cell_ + gap_);
    if (col >= columns_) return -1;
    candidate = row * columns_ + col;
  }
  return candidate >= 0 && candidate < n && block_rect(candidate).contains(pos) ? candidate : -1;
}

QRectF BlockGrid::region_used_rect(int32_t region) const {
  const QRect bar = block_rect(region);
  return bar.isNull() ? QRectF() : region_used_part(bar, snapshot_.blocks[region], snapshot_.block_size);
}

QRectF BlockGrid::region_waste_rect(int32_t region) const {
  const QRect bar = block_rect(region);
  return bar.isNull() ? QRectF() : region_waste_part(bar, snapshot_.blocks[region], snapshot_.block_size);
}

bool BlockGrid::selected_owns(int32_t block) const {
  const std::vector<SeqId>& owners = snapshot_.blocks[block].owners;
  return std::find(owners.begin(), owners.end(), selected_) != owners.end();
}

void BlockGrid::paintEvent(QPaintEvent* event) {
  QPainter p(this);
  p.fillRect(event->rect(), palette().color(QPalette::Base));
  if (snapshot_.blocks.empty()) {
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(rect(), Qt::AlignCenter, tr("no KV cache yet"));
    return;
  }
  if (contiguous()) paint_contiguous(p);
  else paint_paged(p, event->rect());
}

void BlockGrid::paint_paged(QPainter& p, const QRect& dirty) {
  const int n = static_cast<int>(snapshot_.blocks.size());
  // Only the rows the paint event touches (thousands of blocks stay cheap while scrolling).
  const int first_row = std::max(0, (dirty.top() - kMargin) / (cell_ + gap_));
  const int last_row = (dirty.bottom() - kMargin) / (cell_ + gap_);
  QFont small = font();
  small.setPixelSize(std::max(7, cell_ / 3));
  p.setFont(small);
  for (int b = first_row * columns_; b < std::min(n, (last_row + 1) * columns_); ++b) {
    const KvSnapshot::Block& block = snapshot_.blocks[b];
    const QRect cell = block_rect(b);
    std::vector<QColor> owner_colors;
    for (SeqId id : block.owners) owner_colors.push_back(colors_.count(id) ? colors_.at(id) : QColor(Qt::gray));
    paint_block(p, cell, block, snapshot_.block_size, owner_colors);
    if (outside_window(b)) paint_outside_window(p, cell);
    if (cell_ >= 26) {
      p.setPen(QColor(0, 0, 0, 120));
      p.drawText(cell.adjusted(2, 1, 0, 0), Qt::AlignLeft | Qt::AlignTop, QString::number(b));
    }
    mark(p, cell, selected_ >= 0, selected_owns(b), b == hovered_);
  }
}

QFont BlockGrid::region_font() const {
  QFont f = font();
  f.setPixelSize(std::clamp(row_ / 2, 9, 13));
  return f;
}

QRect BlockGrid::caption_rect(int32_t region) const {
  const QRect bar = block_rect(region);
  return bar.isNull() ? QRect() : QRect(kMargin, bar.top(), caption_w_ - 6, bar.height());
}

QString BlockGrid::full_caption(int32_t region) const {
  if (region < 0 || static_cast<size_t>(region) >= snapshot_.blocks.size()) return {};
  const std::vector<SeqId>& owners = snapshot_.blocks[region].owners;
  QString text = QStringLiteral("region %1").arg(region);
  if (!owners.empty()) {
    const SeqId owner = owners.front();
    text += QStringLiteral(" · ") + (region_labels_.count(owner) ? region_labels_.at(owner) : QString::number(owner));
  }
  return text;
}

QString BlockGrid::caption_text(int32_t region) const {
  // The whole caption where it fits, else "region 0", else "0": a short caption reads, a cut one does not.
  const QFontMetrics fm(region_font());
  const int room = caption_rect(region).width();
  for (const QString& text : {full_caption(region), QStringLiteral("region %1").arg(region), QString::number(region)}) {
    if (fm.horizontalAdvance(text) <= room) return text;
  }
  return fm.elidedText(QString::number(region), Qt::ElideRight, room);
}

void BlockGrid::measure_captions() {
  const QFontMetrics fm(region_font());
  int widest = 0;
  for (int32_t r = 0; contiguous() && r < static_cast<int32_t>(snapshot_.blocks.size()); ++r) {
    widest = std::max(widest, fm.horizontalAdvance(full_caption(r)));
  }
  // 6 px between a caption and its bar (caption_rect leaves them out).
  const int width_now = std::max(0, std::min({widest + 6, kRegionLabelWidth, (width() - 2 * kMargin) / 2}));
  if (width_now == caption_w_) return;
  caption_w_ = width_now;
  update();
}

void BlockGrid::paint_contiguous(QPainter& p) {
  p.setFont(region_font());
  for (int32_t r = 0; r < static_cast<int32_t>(snapshot_.blocks.size()); ++r) {
    const KvSnapshot::Block& region = snapshot_.blocks[r];
    const QRect bar = block_rect(r);
    const SeqId owner = region.owners.empty() ? -1 : region.owners.front();
    const QColor color = colors_.count(owner) ? colors_.at(owner) : QColor(Qt::gray);
    paint_region(p, bar, region, snapshot_.block_size, color, true);
    const QRect caption = caption_rect(r);
    p.setPen(palette().color(QPalette::Text));
    p.drawText(caption, Qt::AlignVCenter | Qt::AlignLeft, caption_text(r));
    if (selected_ >= 0 && owner != selected_) p.fillRect(caption, kDim);
    mark(p, bar, selected_ >= 0, owner == selected_, r == hovered_);
  }
}

bool BlockGrid::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const int32_t b = block_at(help->pos());
    if (b >= 0 && tooltip_text_) QToolTip::showText(help->globalPos(), tooltip_text_(b), this, block_rect(b));
    else QToolTip::hideText();
    return true;
  }
  return QWidget::event(event);
}

void BlockGrid::mousePressEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton) emit block_clicked(block_at(event->position().toPoint()));
}

void BlockGrid::mouseMoveEvent(QMouseEvent* event) {
  const int32_t b = block_at(event->position().toPoint());
  if (b == hovered_) return;
  // Repaint only the two cells that changed.
  const QRect old_rect = block_rect(hovered_).adjusted(-2, -2, 2, 2);
  hovered_ = b;
  update(old_rect);
  update(block_rect(b).adjusted(-2, -2, 2, 2));
}

void BlockGrid::leaveEvent(QEvent* event) {
  QWidget::leaveEvent(event);
  const QRect old_rect = block_rect(hovered_).adjusted(-2, -2, 2, 2);
  hovered_ = -1;
  update(old_rect);
}
