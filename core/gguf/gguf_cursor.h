// A bounds-checked little-endian reader over a byte range: every read names the field it reads,
// so a short file gives "PATH: FIELD: truncated ..." instead of a read past the end.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>

#include "core/gguf/gguf_file.h"

namespace inferscope {

class GgufCursor {
 public:
  GgufCursor(const std::string& path, const uint8_t* base, size_t size) : path_(path), base_(base), size_(size) {}

  size_t offset() const { return pos_; }
  size_t remaining() const { return size_ - pos_; }

  [[noreturn]] void fail(const std::string& field, const std::string& problem) const {
    throw GgufError(path_ + ": " + field + ": " + problem);
  }

  // Throws unless n more bytes are there.
  void need(uint64_t n, const std::string& field) const {
    if (n > remaining())
      fail(field, "truncated: needs " + std::to_string(n) + " bytes at offset " + std::to_string(pos_) +
                      ", the file has " + std::to_string(size_));
  }

  const uint8_t* take(uint64_t n, const std::string& field) {
    need(n, field);
    const uint8_t* p = base_ + pos_;
    pos_ += static_cast<size_t>(n);
    return p;
  }

  // Fixed-width little-endian scalars (the reader refuses big-endian files up front).
  template <typename T>
  T read(const std::string& field) {
    T x;
    std::memcpy(&x, take(sizeof(T), field), sizeof(T));
    return x;
  }

  // A GGUF string: uint64 length, then that many bytes (length checked before allocating).
  std::string read_string(const std::string& field) {
    const auto n = read<uint64_t>(field);
    if (n > remaining())
      fail(field, "string length " + std::to_string(n) + " runs past the end of the file (" +
                      std::to_string(remaining()) + " bytes left)");
    const auto* p = take(n, field);
    return std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(n));
  }

  // Throws unless `count` items of at least `min_item_bytes` each can fit in what is left;
  // `noun` names the count inside the field ("array length").
  void check_count(uint64_t count, uint64_t min_item_bytes, const std::string& field, const std::string& noun = "") const {
    if (count > remaining() / min_item_bytes)
      fail(field, (noun.empty() ? "" : noun + " ") + std::to_string(count) + " is more than the " +
                      std::to_string(remaining()) + " bytes left can hold");
  }

 private:
  const std::string& path_;
  const uint8_t* base_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace inferscope
