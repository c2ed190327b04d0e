#include "gui/bridge/resource_path.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QStringList>

namespace inferscope::gui {

namespace {

// The installed data folder; the source tree too when the program runs from inside its build folder
// (an installed or unpacked copy never reads the tree it was built from).
QStringList resource_roots() {
  const QString program_dir = QCoreApplication::applicationDirPath();
  QStringList roots{QDir::cleanPath(program_dir + "/" + INFERSCOPE_DATA_FROM_BIN)};
  const QString build_dir = QFileInfo(INFERSCOPE_BINARY_DIR).canonicalFilePath();
  if (!build_dir.isEmpty() && program_dir.startsWith(build_dir + "/")) roots << INFERSCOPE_SOURCE_DIR;
  return roots;
}

}  // namespace

QString resolve_resource_path(const QString& path) {
  if (QFileInfo(path).isAbsolute() || QFileInfo::exists(path)) return path;
  for (const QString& root : resource_roots()) {
    const QString candidate = root + "/" + path;
    if (QFileInfo::exists(candidate)) return candidate;
  }
  return path;
}

}  // namespace inferscope::gui
