// What hovering a block (or a contiguous region) says: id, owners, ref count, fill, prefix hash and
// the text of the tokens it holds (from the owning sequence's tokens for that logical block).
#pragma once
#include <QString>
#include <functional>
#include <span>
#include <vector>

#include "core/kv/kv_cache.h"

namespace inferscope::gui {

using SequenceLabeler = std::function<QString(SeqId)>;
using TokenDecoder = std::function<QString(std::span<const int32_t>)>;

// The token ids stored in `block`, from the first owner whose tokens are known (empty when none).
std::vector<int32_t> block_tokens(const KvSnapshot& s, int32_t block);

// The tooltip text; `decode` may be empty (then token ids are listed instead of text).
QString block_tooltip(const KvSnapshot& s, int32_t block, const SequenceLabeler& label, const TokenDecoder& decode);

}  // namespace inferscope::gui
