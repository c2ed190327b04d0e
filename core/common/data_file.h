// Data files shipped in resources/ (devices, model shapes): finding one by a short name, reading it.
#pragma once
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace inferscope {

// `relative` (a path under the project's root: "resources/devices/h200.json", "models/demo.gguf") as
// found: from the working directory first, then in the data folder installed next to the program
// (../share/inferscope from its bin folder), then, for a program run from inside its build folder, in
// the source tree it was built from (an installed or unpacked copy never reads that tree). An absolute
// path, or one found nowhere, comes back as given (reading it then names it).
std::string find_data_file(const std::string& relative);

// `name_or_path` as a file: a path as given when it names a .json file, else
// find_data_file("resources/FOLDER/NAME.json"), so a short name works from any working directory.
std::string data_file_path(const std::string& folder, const std::string& name_or_path);

// The JSON object in `path`; throws std::runtime_error naming the file when it cannot be read
// ("PATH: cannot read the WHAT") or holds no JSON object.
nlohmann::json read_json_object(const std::string& path, const std::string& what);
// The JSON object in `text`; throws std::runtime_error "WHERE: not a JSON object" when it is not one
// (malformed JSON included).
nlohmann::json parse_json_object(std::string_view text, const std::string& where);

}  // namespace inferscope
