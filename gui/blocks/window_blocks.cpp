#include "gui/blocks/window_blocks.h"

namespace inferscope::gui {

std::vector<bool> blocks_outside_window(const KvSnapshot& s, int32_t window) {
  std::vector<bool> outside(s.blocks.size(), false);
  if (window <= 0 || s.kind != "paged") return outside;
  std::vector<bool> inside(s.blocks.size(), false);
  for (const KvSnapshot::Sequence& seq : s.sequences) {
    const int64_t first_seen = int64_t{seq.length} - window + 1;  // the next token's first visible position
    for (size_t i = 0; i < seq.block_table.size(); ++i) {
      const int32_t b = seq.block_table[i];
      if (b < 0 || static_cast<size_t>(b) >= s.blocks.size()) continue;
      // logical block i holds positions i*block_size .. (i+1)*block_size - 1
      const bool before = static_cast<int64_t>(i + 1) * s.block_size <= first_seen;
      if (before) outside[b] = true;
      else inside[b] = true;  // a shared block some owner still sees stays inside
    }
  }
  for (size_t b = 0; b < outside.size(); ++b) outside[b] = outside[b] && !inside[b];
  return outside;
}

QString outside_window_text(const SlidingWindowInfo& w) {
  const QString readers = w.local_layers < w.layers
                              ? QStringLiteral("only the global layers (%1) still read it").arg(w.layers - w.local_layers)
                              : QStringLiteral("no layer reads it any more");
  return QStringLiteral("outside the sliding window: %1 of %2 layers are local and keep at most the last %3 tokens; %4")
      .arg(w.local_layers)
      .arg(w.layers)
      .arg(w.window)
      .arg(readers);
}

}  // namespace inferscope::gui
