// Finding the project's files (resources/, a model named by a relative path): the working directory
// first, then the data folder installed next to the program (../share/inferscope from its bin
// folder), then, for a program run from its build folder, the source tree it was built from.
#pragma once
#include <QString>

namespace inferscope::gui {

// `path` when absolute or present from the working directory, else the first of the folders above
// that holds it, else `path` unchanged (its error names it): core's find_data_file.
QString resolve_resource_path(const QString& path);

}  // namespace inferscope::gui
