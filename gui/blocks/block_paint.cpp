#include "gui/blocks/block_paint.h"

#include <algorithm>

namespace inferscope::gui {

namespace {

const QColor kFree(240, 240, 240), kFreeEdge(212, 212, 212), kCached(226, 226, 226), kCachedHatch(140, 140, 140),
    kWaste(253, 226, 222), kWasteHatch(214, 39, 40), kSharedEdge(25, 25, 25);

double fill_share(int32_t filled, int32_t capacity) {
  return capacity > 0 ? std::clamp(static_cast<double>(filled) / capacity, 0.0, 1.0) : 0.0;
}

}  // namespace

QColor pale(QColor c, double amount) {
  auto mix = [amount](int v) { return static_cast<int>(v + (255 - v) * amount); };
  return QColor(mix(c.red()), mix(c.green()), mix(c.blue()));
}

void paint_block(QPainter& p, const QRectF& cell, const KvSnapshot::Block& block, int32_t block_size,
                 const std::vector<QColor>& owner_colors) {
  p.save();
  if (owner_colors.empty()) {
    p.setPen(QPen(block.cached ? kCachedHatch : kFreeEdge, 1));
    p.setBrush(block.cached ? kCached : kFree);
    p.drawRect(cell.adjusted(0.5, 0.5, -0.5, -0.5));
    if (block.cached) p.fillRect(cell.adjusted(1, 1, -1, -1), QBrush(kCachedHatch, Qt::BDiagPattern));
    p.restore();
    return;
  }
  // One horizontal band per owner (a shared block shows every sharer's colour).
  const size_t bands = std::min<size_t>(owner_colors.size(), 4);
  const double band_h = cell.height() / static_cast<double>(bands);
  const double filled_w = cell.width() * fill_share(block.filled, block_size);
  for (size_t i = 0; i < bands; ++i) {
    const QRectF band(cell.left(), cell.top() + band_h * static_cast<double>(i), cell.width(), band_h);
    p.fillRect(band, pale(owner_colors[i]));
    p.fillRect(QRectF(band.left(), band.top(), filled_w, band.height()), owner_colors[i]);
  }
  const bool shared = block.ref_count > 1;
  p.setBrush(Qt::NoBrush);
  p.setPen(shared ? QPen(kSharedEdge, 2.2) : QPen(owner_colors.front().darker(140), 1));
  p.drawRect(shared ? cell.adjusted(1, 1, -1, -1) : cell.adjusted(0.5, 0.5, -0.5, -0.5));
  if (shared && cell.width() >= 18) {
    QFont f = p.font();
    f.setPixelSize(std::max(8, static_cast<int>(cell.height() * 0.32)));
    f.setBold(true);
    p.setFont(f);
    const QRectF corner = cell.adjusted(2, 1, -3, -1);
    p.setPen(Qt::white);
    p.drawText(corner.translated(0.8, 0.8), Qt::AlignRight | Qt::AlignBottom, QStringLiteral("×%1").arg(block.ref_count));
    p.setPen(kSharedEdge);
    p.drawText(corner, Qt::AlignRight | Qt::AlignBottom, QStringLiteral("×%1").arg(block.ref_count));
  }
  p.restore();
}

void paint_outside_window(QPainter& p, const QRectF& cell) {
  p.fillRect(cell, QColor(255, 255, 255, 150));
  p.fillRect(cell.adjusted(1, 1, -1, -1), QBrush(QColor(90, 90, 90, 140), Qt::DiagCrossPattern));
}

QRectF region_used_part(const QRectF& bar, const KvSnapshot::Block& region, int32_t reserved) {
  return QRectF(bar.left(), bar.top(), bar.width() * fill_share(region.filled, reserved), bar.height());
}

QRectF region_waste_part(const QRectF& bar, const KvSnapshot::Block& region, int32_t reserved) {
  if (region.owners.empty()) return {};
  const QRectF used = region_used_part(bar, region, reserved);
  return QRectF(used.right(), bar.top(), bar.right() - used.right(), bar.height());
}

std::vector<BarLabel> region_labels(const QFontMetricsF& fm, const QRectF& bar, const KvSnapshot::Block& region,
                                    int32_t reserved) {
  std::vector<BarLabel> labels;
  const auto add = [&](const QRectF& area, const QStringList& texts, QColor color, bool plate) {
    for (const QString& text : texts) {
      if (fm.horizontalAdvance(text) + 8 > area.width() || fm.height() > area.height()) continue;
      labels.push_back({area, text, color, plate});
      return;
    }
  };
  if (region.owners.empty()) {
    add(bar,
        {QStringLiteral("free region (%1 token slots)").arg(reserved), QStringLiteral("free (%1 slots)").arg(reserved),
         QStringLiteral("free")},
        QColor(150, 150, 150), false);
    return labels;
  }
  const int32_t unused = reserved - region.filled;
  const QString share = QString::number(100.0 * unused / std::max(reserved, 1), 'f', 0) + QLatin1Char('%');
  add(region_waste_part(bar, region, reserved),
      {QStringLiteral("reserved, unused: %1 tokens (%2)").arg(unused).arg(share),
       QStringLiteral("unused %1 (%2)").arg(unused).arg(share), share},
      kWasteHatch.darker(130), true);
  add(region_used_part(bar, region, reserved), {QStringLiteral("%1 used").arg(region.filled), QString::number(region.filled)},
      QColor(20, 20, 20), true);
  return labels;
}

void paint_region(QPainter& p, const QRectF& bar, const KvSnapshot::Block& region, int32_t reserved, QColor owner,
                  bool annotate) {
  p.save();
  if (region.owners.empty()) {
    p.setPen(QPen(kFreeEdge, 1));
    p.setBrush(kFree);
    p.drawRect(bar.adjusted(0.5, 0.5, -0.5, -0.5));
  } else {
    const QRectF used = region_used_part(bar, region, reserved), waste = region_waste_part(bar, region, reserved);
    p.fillRect(used, owner);
    p.fillRect(waste, kWaste);
    p.fillRect(waste, QBrush(kWasteHatch, Qt::BDiagPattern));
    p.setBrush(Qt::NoBrush);
    p.setPen(QPen(owner.darker(140), 1));
    p.drawRect(bar.adjusted(0.5, 0.5, -0.5, -0.5));
  }
  if (annotate) {
    const QFontMetricsF fm(p.font());
    for (const BarLabel& label : region_labels(fm, bar, region, reserved)) {
      if (label.plate) {
        p.fillRect(fm.boundingRect(label.area, Qt::AlignCenter, label.text).adjusted(-3, 0, 3, 0), QColor(255, 255, 255, 215));
      }
      p.setPen(label.color);
      p.drawText(label.area, Qt::AlignCenter, label.text);
    }
  }
  p.restore();
}

}  // namespace inferscope::gui
