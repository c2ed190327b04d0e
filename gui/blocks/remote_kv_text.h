// What the block-table view says for a remote server, whose KV cache it cannot draw: the usage the
// server reports (a gauge of its /metrics), or that it reports none, and why no block is shown.
#pragma once
#include <QString>
#include <optional>

namespace inferscope::gui {

// "SOURCE reports KV usage 42% (of 1000 blocks of 16 tokens)", or "SOURCE does not report KV usage"
// when `usage_fraction` is unknown; the parenthesis says what of the block count and size is known.
// Throws std::invalid_argument naming the value when usage is outside 0..1 or a count is not positive.
QString remote_kv_usage_text(const QString& source, std::optional<double> usage_fraction, std::optional<int> blocks_total,
                             std::optional<int> block_size);

// "The server does not expose its block tables: individual blocks cannot be shown."
QString remote_blocks_hidden_text();

}  // namespace inferscope::gui
