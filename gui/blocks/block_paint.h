// How one KV block or one contiguous region looks; shared by the grid and its legend so the legend
// always shows exactly what the grid draws.
//   owned block: the owner's colour; the filled share (filled / block_size) solid from the left, the
//                rest a pale tint; several owners split the cell into bands; shared (ref_count > 1)
//                gets a heavy dark outline and "xN"
//   cached free: grey with a diagonal hatch (holds a reusable prefix, reclaimable)
//   free:        plain pale grey
//   region:      the used part solid, the reserved-but-unused part hatched red (the waste)
//   outside the sliding window (paged, drawn over the block): veiled white and cross-hatched
#pragma once
#include <QColor>
#include <QFontMetricsF>
#include <QPainter>
#include <QRectF>
#include <QString>
#include <vector>

#include "core/kv/kv_cache.h"

namespace inferscope::gui {

// A colour mixed toward white: the "allocated but not yet written" tint.
QColor pale(QColor c, double amount = 0.72);

// `owner_colors`: one per owner of the block, in block.owners order.
void paint_block(QPainter& p, const QRectF& cell, const KvSnapshot::Block& block, int32_t block_size,
                 const std::vector<QColor>& owner_colors);

// Veils a painted block that lies outside the local layers' sliding window (window_blocks.h).
void paint_outside_window(QPainter& p, const QRectF& cell);

// `region.filled` of `reserved` slots used; with `annotate`, the waste is labelled in the bar.
void paint_region(QPainter& p, const QRectF& bar, const KvSnapshot::Block& region, int32_t reserved, QColor owner,
                  bool annotate);

// A caption centred in part of a bar; `plate`: on a white plate, so it reads over the hatch.
struct BarLabel {
  QRectF area;
  QString text;
  QColor color;
  bool plate = true;
};

// What paint_region() writes in `bar` when annotating, in the font of `fm`: for each part (the used
// share and the waste, or the whole of a free region) the longest of its captions that fits with
// 4 px either side; none when even the shortest does not (a centred text wider than its part would
// lose both ends: "gion (1024 toker").
std::vector<BarLabel> region_labels(const QFontMetricsF& fm, const QRectF& bar, const KvSnapshot::Block& region,
                                    int32_t reserved);

// Where paint_region() puts the used and the wasted part of a bar.
QRectF region_used_part(const QRectF& bar, const KvSnapshot::Block& region, int32_t reserved);
QRectF region_waste_part(const QRectF& bar, const KvSnapshot::Block& region, int32_t reserved);

}  // namespace inferscope::gui
