// What the fuzz targets make of libFuzzer's bytes: the whole input as text, a stream cut into pieces
// the way a socket might deliver it, or fields separated by NUL bytes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace inferscope::fuzz {

inline std::string_view text_of(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// `stream` cut into pieces of 1 to 16 bytes; `seed` picks the lengths, so the corpus explores cuts too.
inline std::vector<std::string_view> pieces(std::string_view stream, uint8_t seed) {
  std::vector<std::string_view> out;
  for (size_t at = 0; at < stream.size();) {
    const size_t length = 1 + seed % 16;
    out.push_back(stream.substr(at, length));
    at += length;
    seed = static_cast<uint8_t>(seed * 5 + 1);  // a full-period step through 0..255
  }
  return out;
}

// The NUL-separated fields of `input` (one field when it holds no NUL).
inline std::vector<std::string_view> fields(std::string_view input) {
  std::vector<std::string_view> out;
  for (size_t at = 0;;) {
    const size_t nul = input.find('\0', at);
    out.push_back(input.substr(at, nul - at));
    if (nul == std::string_view::npos) return out;
    at = nul + 1;
  }
}

}  // namespace inferscope::fuzz
