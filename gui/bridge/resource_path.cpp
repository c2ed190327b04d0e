#include "gui/bridge/resource_path.h"

#include <QFileInfo>

namespace inferscope::gui {

QString resolve_resource_path(const QString& path) {
  if (QFileInfo(path).isAbsolute() || QFileInfo::exists(path)) return path;
  const QString in_source = QString(INFERSCOPE_SOURCE_DIR) + "/" + path;
  return QFileInfo::exists(in_source) ? in_source : path;
}

}  // namespace inferscope::gui
