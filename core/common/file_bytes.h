// Reading a whole file into memory, for the readers that parse text (workloads, experiments, data files).
#pragma once
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

namespace inferscope {

// The file's bytes; nullopt when it cannot be opened.
inline std::optional<std::string> read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace inferscope
