#include "core/version/version.h"

#include "version_info.h"

namespace inferscope {

std::string version_string() {
  const std::string revision = version_info::kGitRevision;
  return std::string(version_info::kProjectVersion) + (revision.empty() ? "" : " (git " + revision + ")");
}

std::string user_agent() { return std::string("inferscope/") + version_info::kProjectVersion; }

}  // namespace inferscope
