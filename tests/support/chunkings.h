// Ways to cut a byte stream into the reads a socket might return, for parsers fed incrementally:
// one byte at a time, every single cut point, and seeded random cuts.
#pragma once
#include <cstddef>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace inferscope {

// Each entry is one way to split `text` into consecutive chunks (concatenated, they give `text`).
inline std::vector<std::vector<std::string>> chunkings(std::string_view text, unsigned seed = 1234) {
  std::vector<std::vector<std::string>> out;
  std::vector<std::string> bytes;
  for (char c : text) bytes.emplace_back(1, c);
  out.push_back(bytes);
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    out.push_back({std::string(text.substr(0, cut)), std::string(text.substr(cut))});
  }
  std::mt19937 rng(seed);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<std::string> chunks;
    size_t pos = 0;
    while (pos < text.size()) {
      const size_t len = std::uniform_int_distribution<size_t>(1, 17)(rng);
      chunks.emplace_back(text.substr(pos, len));
      pos += len;
    }
    out.push_back(chunks);
  }
  return out;
}

}  // namespace inferscope
