#include "core/common/data_file.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "core/common/file_bytes.h"

namespace inferscope {

std::string find_data_file(const std::string& relative) {
  namespace fs = std::filesystem;
  if (fs::path(relative).is_absolute() || fs::exists(relative)) return relative;
  std::error_code ec;
  const fs::path program_dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  if (ec) return relative;
  std::vector<fs::path> roots{program_dir / INFERSCOPE_DATA_FROM_BIN};
  // A program inside the build folder it was built in also reads the source tree.
  const fs::path build_dir = fs::weakly_canonical(INFERSCOPE_BINARY_DIR, ec);
  const auto [end, _] = std::mismatch(build_dir.begin(), build_dir.end(), program_dir.begin(), program_dir.end());
  if (!ec && end == build_dir.end()) roots.emplace_back(INFERSCOPE_SOURCE_DIR);
  for (const fs::path& root : roots) {
    const fs::path candidate = root / relative;
    if (fs::exists(candidate, ec)) return candidate.lexically_normal().string();
  }
  return relative;
}

std::string data_file_path(const std::string& folder, const std::string& name_or_path) {
  const bool is_path = name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".json");
  return is_path ? name_or_path : find_data_file("resources/" + folder + "/" + name_or_path + ".json");
}

nlohmann::json read_json_object(const std::string& path, const std::string& what) {
  const std::optional<std::string> text = read_file_bytes(path);
  if (!text) throw std::runtime_error(path + ": cannot read the " + what);
  return parse_json_object(*text, path);
}

nlohmann::json parse_json_object(std::string_view text, const std::string& where) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) throw std::runtime_error(where + ": not a JSON object");
  return j;
}

}  // namespace inferscope
