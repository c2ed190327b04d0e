#include "gui/blocks/sequence_palette.h"

#include <array>
#include <cmath>

namespace inferscope::gui {

namespace {

// Ten colours that stay apart from each other and from the grey of free blocks.
constexpr std::array<QRgb, 10> kPalette = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd,
                                           0x8c564b, 0xe377c2, 0x17becf, 0xbcbd22, 0x3f51b5};

}  // namespace

QColor SequencePalette::color_for(const QString& key) {
  auto it = assigned_.find(key);
  if (it != assigned_.end()) return *it;
  const qsizetype n = assigned_.size();
  QColor c;
  if (n < static_cast<qsizetype>(kPalette.size())) {
    c = QColor::fromRgb(kPalette[static_cast<size_t>(n)]);
  } else {
    const double golden_turn = 0.381966;  // of a full turn: consecutive hues land far apart
    c = QColor::fromHsvF(std::fmod(0.07 + golden_turn * static_cast<double>(n), 1.0), 0.65, 0.82);
  }
  assigned_.insert(key, c);
  return c;
}

}  // namespace inferscope::gui
