#include "gui/blocks/remote_kv_text.h"

#include <QObject>
#include <stdexcept>
#include <string>

namespace inferscope::gui {
namespace {

void check_positive(const char* what, std::optional<int> value) {
  if (value && *value <= 0) throw std::invalid_argument(std::string(what) + " must be positive, got " + std::to_string(*value));
}

// "(of 1000 blocks of 16 tokens)", "(of 1000 blocks)", "(blocks of 16 tokens)" or "".
QString block_geometry(std::optional<int> blocks_total, std::optional<int> block_size) {
  if (blocks_total && block_size) return QObject::tr(" (of %1 blocks of %2 tokens)").arg(*blocks_total).arg(*block_size);
  if (blocks_total) return QObject::tr(" (of %1 blocks)").arg(*blocks_total);
  if (block_size) return QObject::tr(" (blocks of %1 tokens)").arg(*block_size);
  return {};
}

}  // namespace

QString remote_kv_usage_text(const QString& source, std::optional<double> usage_fraction, std::optional<int> blocks_total,
                             std::optional<int> block_size) {
  // Written so that NaN fails too.
  if (usage_fraction && !(*usage_fraction >= 0 && *usage_fraction <= 1))
    throw std::invalid_argument("KV usage fraction must be within 0..1, got " + std::to_string(*usage_fraction));
  check_positive("KV blocks total", blocks_total);
  check_positive("KV block size", block_size);
  if (!usage_fraction) return QObject::tr("%1 does not report KV usage").arg(source);
  return QObject::tr("%1 reports KV usage %2%%3")
      .arg(source)
      .arg(100 * *usage_fraction, 0, 'f', 0)
      .arg(block_geometry(blocks_total, block_size));
}

QString remote_blocks_hidden_text() {
  return QObject::tr("The server does not expose its block tables: individual blocks cannot be shown.");
}

}  // namespace inferscope::gui
