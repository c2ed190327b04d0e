// The version the programs print with --version: one number, from CMake's project(), with the git
// revision the build was configured at when the sources are a checkout.
#pragma once
#include <string>

namespace inferscope {

// "0.1.0", or "0.1.0 (git f6e26e5c1a2b)" (with "-dirty" when there were uncommitted changes).
std::string version_string();
// "inferscope/0.1.0": the User-Agent our HTTP client sends, so a server can tell who asked.
std::string user_agent();

}  // namespace inferscope
