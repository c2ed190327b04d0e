// Data files shipped in resources/ (devices, model shapes): finding one by a short name, reading it.
#pragma once
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace inferscope {

// `name_or_path` as a file: a path as given when it names a .json file, else resources/FOLDER/NAME.json
// under the working directory or, failing that, under the data folder installed next to the program
// (../share/inferscope).
std::string data_file_path(const std::string& folder, const std::string& name_or_path);

// The JSON object in `path`; throws std::runtime_error naming the file when it cannot be read
// ("PATH: cannot read the WHAT") or holds no JSON object.
nlohmann::json read_json_object(const std::string& path, const std::string& what);
// The JSON object in `text`; throws std::runtime_error "WHERE: not a JSON object" when it is not one
// (malformed JSON included).
nlohmann::json parse_json_object(std::string_view text, const std::string& where);

}  // namespace inferscope
