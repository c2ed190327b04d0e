#include "core/sched/data_file.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/common/file_bytes.h"

namespace inferscope {

std::string data_file_path(const std::string& folder, const std::string& name_or_path) {
  const bool is_path = name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".json");
  if (is_path) return name_or_path;
  const std::filesystem::path relative = "resources/" + folder + "/" + name_or_path + ".json";
  if (std::filesystem::exists(relative)) return relative.string();
  // the data folder installed next to the program
  std::error_code ec;
  const std::filesystem::path program = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path installed = program.parent_path() / INFERSCOPE_DATA_FROM_BIN / relative;
    if (std::filesystem::exists(installed)) return installed.lexically_normal().string();
  }
  return relative.string();  // reading it then names the path as given
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
