// The painted part of the block-table view (see block_table_view.h and block_paint.h): paged, one
// cell per physical block in id order, the cell size adapting so all blocks fit the visible height
// (down to a minimum, then the grid grows and scrolls); contiguous, one bar per reserved region.
#pragma once
#include <QColor>
#include <QRect>
#include <QWidget>
#include <functional>
#include <map>
#include <vector>

#include "core/kv/kv_cache.h"

class BlockGrid : public QWidget {
  Q_OBJECT
 public:
  static constexpr int kMinCell = 9, kMaxCell = 40, kMargin = 6;
  static constexpr int kMinRow = 16, kMaxRow = 36, kRegionLabelWidth = 150;  // a caption's room at most

  explicit BlockGrid(QWidget* parent = nullptr);
  // `colors`: each sequence's colour; `selected`: the highlighted sequence (-1: none).
  void set_snapshot(const inferscope::KvSnapshot& snapshot, std::map<inferscope::SeqId, QColor> colors);
  void set_selected(inferscope::SeqId seq);
  void set_region_labels(std::map<inferscope::SeqId, QString> labels);  // contiguous rows' captions
  // Paged: one flag per block, veiled as outside the local layers' window (window_blocks.h); empty: none.
  void set_outside_window(std::vector<bool> outside);
  bool outside_window(int32_t block) const;
  // The height the grid should fit in (the scroll area's viewport); cells shrink to fit it.
  void set_fit_height(int height);
  void set_tooltip_text(std::function<QString(int32_t block)> text) { tooltip_text_ = std::move(text); }

  // Geometry queries (grid coordinates): the block (paged) or region (contiguous) under `pos`, -1 for
  // none; a block's cell or a region's bar; a region's used and reserved-but-unused parts.
  int32_t block_at(QPoint pos) const;
  QRect block_rect(int32_t block) const;
  QRectF region_used_rect(int32_t region) const;
  QRectF region_waste_rect(int32_t region) const;
  // Contiguous: the font of the rows' captions and bar labels, the caption area left of a region's
  // bar, and its caption as drawn there: "region 0 · Story", or "region 0" or "0" where that does not fit.
  QFont region_font() const;
  QRect caption_rect(int32_t region) const;
  QString caption_text(int32_t region) const;
  int cell_size() const { return cell_; }
  const inferscope::KvSnapshot& snapshot() const { return snapshot_; }

 signals:
  void block_clicked(int32_t block);  // -1: a click outside every block

 protected:
  bool event(QEvent* event) override;
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void leaveEvent(QEvent* event) override;

 private:
  bool contiguous() const { return snapshot_.kind == "contiguous"; }
  void relayout();
  // Contiguous: "region 0 · Story" in full; measure_captions() sizes the room before the bars to the
  // widest, kRegionLabelWidth at most and never more than half the grid (the bars keep the rest).
  QString full_caption(int32_t region) const;
  void measure_captions();
  void paint_paged(QPainter& p, const QRect& dirty);
  void paint_contiguous(QPainter& p);
  bool selected_owns(int32_t block) const;

  inferscope::KvSnapshot snapshot_;
  std::map<inferscope::SeqId, QColor> colors_;
  std::map<inferscope::SeqId, QString> region_labels_;
  std::vector<bool> outside_window_;
  std::function<QString(int32_t)> tooltip_text_;
  inferscope::SeqId selected_ = -1;
  int32_t hovered_ = -1;
  int fit_height_ = 0;
  // Layout: paged cells (size, gap, columns) or contiguous rows (height).
  int cell_ = kMaxCell, gap_ = 2, columns_ = 1, row_ = kMaxRow, caption_w_ = kRegionLabelWidth;
};
