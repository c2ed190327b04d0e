// Unicode general categories and the White_Space property, from the generated tables.
#include "core/tokenizer/unicode.h"

#include <algorithm>
#include <array>

namespace inferscope {
namespace {

struct CategoryRange {
  uint32_t first, last;
  UnicodeCategory category;
};
struct CodePointRange {
  uint32_t first, last;
};

#include "unicode_table.inc"

// Latin-1 is looked up on every character of typical text: answer it from a small array.
std::array<UnicodeCategory, 256> latin1_categories() {
  std::array<UnicodeCategory, 256> table{};
  for (const auto& r : kCategoryRanges) {
    for (uint32_t cp = r.first; cp <= r.last && cp < 256; ++cp) table[cp] = r.category;
  }
  return table;
}

template <typename Range, size_t N>
const Range* find_range(const Range (&ranges)[N], uint32_t cp) {
  // First range whose last code point is >= cp; it holds cp when its first is <= cp.
  const Range* it = std::lower_bound(std::begin(ranges), std::end(ranges), cp,
                                     [](const Range& r, uint32_t c) { return r.last < c; });
  return (it != std::end(ranges) && it->first <= cp) ? it : nullptr;
}

}  // namespace

UnicodeCategory unicode_category(uint32_t cp) {
  static const auto latin1 = latin1_categories();
  if (cp < 256) return latin1[cp];
  const CategoryRange* r = find_range(kCategoryRanges, cp);
  return r ? r->category : UnicodeCategory::Cn;
}

bool unicode_is_letter(uint32_t cp) {
  const auto c = unicode_category(cp);
  return c >= UnicodeCategory::Lu && c <= UnicodeCategory::Lo;
}

bool unicode_is_number(uint32_t cp) {
  const auto c = unicode_category(cp);
  return c >= UnicodeCategory::Nd && c <= UnicodeCategory::No;
}

bool unicode_is_whitespace(uint32_t cp) { return find_range(kWhitespaceRanges, cp) != nullptr; }

}  // namespace inferscope
