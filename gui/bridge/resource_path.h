// Finding the project's files (the demo model, resources/) from a relative path: the working
// directory first, then the source tree the workbench was built from.
#pragma once
#include <QString>

namespace inferscope::gui {

// `path` when absolute or present from the working directory, else the source tree's copy when
// that exists, else `path` unchanged (its error names it).
QString resolve_resource_path(const QString& path);

}  // namespace inferscope::gui
