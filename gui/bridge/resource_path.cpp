#include "gui/bridge/resource_path.h"

#include "core/common/data_file.h"

namespace inferscope::gui {

QString resolve_resource_path(const QString& path) { return QString::fromStdString(find_data_file(path.toStdString())); }

}  // namespace inferscope::gui
