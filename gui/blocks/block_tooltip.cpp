#include "gui/blocks/block_tooltip.h"

#include <QStringList>
#include <algorithm>

namespace inferscope::gui {

namespace {

constexpr qsizetype kMaxTextChars = 240;  // a region's text is elided to its end beyond this

const KvSnapshot::Sequence* find_sequence(const KvSnapshot& s, SeqId id) {
  for (const KvSnapshot::Sequence& seq : s.sequences)
    if (seq.id == id) return &seq;
  return nullptr;
}

// Token text on one line, quoted, with newlines shown as arrows and a long text cut at the front.
QString quoted(QString text) {
  text.replace(QLatin1Char('\n'), QStringLiteral("↵"));
  if (text.size() > kMaxTextChars) text = QStringLiteral("…") + text.right(kMaxTextChars);
  return QStringLiteral("“") + text + QStringLiteral("”");
}

QString token_text(std::span<const int32_t> ids, const TokenDecoder& decode) {
  if (decode) return quoted(decode(ids));
  QStringList parts;
  for (int32_t id : ids) parts << QString::number(id);
  return QStringLiteral("token ids ") + parts.join(QLatin1Char(' '));
}

}  // namespace

std::vector<int32_t> block_tokens(const KvSnapshot& s, int32_t block) {
  if (block < 0 || static_cast<size_t>(block) >= s.blocks.size()) return {};
  for (SeqId owner : s.blocks[block].owners) {
    const KvSnapshot::Sequence* seq = find_sequence(s, owner);
    if (!seq || seq->tokens.empty()) continue;
    if (s.kind == "contiguous") return seq->tokens;  // the region holds the whole sequence
    const auto logical = std::find(seq->block_table.begin(), seq->block_table.end(), block) - seq->block_table.begin();
    const size_t begin = static_cast<size_t>(logical) * static_cast<size_t>(s.block_size);
    const size_t end = std::min(begin + static_cast<size_t>(s.blocks[block].filled), seq->tokens.size());
    if (begin < end) return {seq->tokens.begin() + static_cast<ptrdiff_t>(begin), seq->tokens.begin() + static_cast<ptrdiff_t>(end)};
  }
  return {};
}

QString block_tooltip(const KvSnapshot& s, int32_t block, const SequenceLabeler& label, const TokenDecoder& decode) {
  if (block < 0 || static_cast<size_t>(block) >= s.blocks.size()) return {};
  const KvSnapshot::Block& b = s.blocks[block];
  const bool contiguous = s.kind == "contiguous";
  QStringList lines;
  lines << (contiguous ? QStringLiteral("Region %1 (a reservation of %2 token slots)")
                       : QStringLiteral("Block %1 (%2 token slots)"))
               .arg(block)
               .arg(s.block_size);
  QStringList owners;
  for (SeqId id : b.owners) owners << QStringLiteral("%1 (seq %2)").arg(label ? label(id) : QString::number(id)).arg(id);
  if (!owners.isEmpty()) lines << QStringLiteral("owner%1: %2").arg(owners.size() > 1 ? "s" : "", owners.join(QStringLiteral(", ")));
  else if (b.cached) lines << QStringLiteral("free, cached: holds a reusable prompt prefix (reclaimed last)");
  else lines << QStringLiteral("free");
  if (!contiguous && !b.owners.empty()) {
    QString refs = QStringLiteral("ref count: %1").arg(b.ref_count);
    if (b.ref_count > 1) refs += QStringLiteral(" (shared: stored once, copied on the next write)");
    lines << refs;
  }
  if (!b.owners.empty()) {
    QString fill = QStringLiteral("filled: %1 / %2 tokens").arg(b.filled).arg(s.block_size);
    if (contiguous && s.block_size > 0)
      fill += QStringLiteral("; reserved but unused: %1 (%2%)")
                  .arg(s.block_size - b.filled)
                  .arg(100.0 * (s.block_size - b.filled) / s.block_size, 0, 'f', 0);
    lines << fill;
  }
  if (b.hash != 0) lines << QStringLiteral("prefix hash: %1").arg(b.hash, 16, 16, QLatin1Char('0'));
  for (SeqId id : b.owners) {
    const KvSnapshot::Sequence* seq = find_sequence(s, id);
    if (!seq || contiguous) continue;
    const auto logical = std::find(seq->block_table.begin(), seq->block_table.end(), block) - seq->block_table.begin();
    lines << QStringLiteral("seq %1: logical block %2").arg(id).arg(logical);
  }
  const std::vector<int32_t> ids = block_tokens(s, block);
  if (!ids.empty()) lines << QStringLiteral("text: ") + token_text(ids, decode);
  return lines.join(QLatin1Char('\n'));
}

}  // namespace inferscope::gui
