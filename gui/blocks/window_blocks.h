// Which paged blocks lie wholly outside the sliding window of a model's local layers: every owner's
// next token (at its length) attends there to the last `window` positions only, so those layers no
// longer read the block (the global layers still do; freeing such blocks is a later step).
#pragma once
#include <QString>
#include <cstdint>
#include <vector>

#include "core/kv/kv_cache.h"

namespace inferscope::gui {

// The window as the block view shows it (window 0: none, nothing is marked).
struct SlidingWindowInfo {
  int32_t window = 0;
  int32_t local_layers = 0;  // layers that attend through the window
  int32_t layers = 0;
};

// One flag per physical block of a paged snapshot: true when, for every owner, each of its positions
// is before the first one the owner's next token sees (length - window + 1). Contiguous, or no
// window: all false.
std::vector<bool> blocks_outside_window(const KvSnapshot& s, int32_t window);

// The tooltip line of a block outside the window.
QString outside_window_text(const SlidingWindowInfo& w);

}  // namespace inferscope::gui
