// Parses a GGUF image (already in memory) into a GgufFile: header, metadata, tensor infos, and
// the placement of every tensor's data. Internal to the gguf library; GgufFile::open calls it.
#pragma once
#include <cstdint>
#include <string>

#include "core/gguf/gguf_cursor.h"
#include "core/gguf/gguf_file.h"

namespace inferscope {

class GgufParser {
 public:
  // `file` must already hold path_, base_ and size_.
  explicit GgufParser(GgufFile& file);
  // Throws GgufError "PATH: FIELD: VALUE problem" at the first problem.
  void parse();

  static constexpr uint32_t kMaxDims = 4;
  static constexpr int kMaxArrayDepth = 8;  // arrays of arrays of ... beyond this are refused
  // Each item costs ~50 bytes in memory for 1 byte in the file; 2^24 is 64x the largest vocabulary.
  static constexpr uint64_t kMaxArrayItems = uint64_t{1} << 24;

 private:
  void read_header(uint64_t& n_tensors, uint64_t& n_kv);
  void read_metadata(uint64_t n_kv);
  GgufValue read_value(GgufType type, const std::string& field, int depth);
  GgufType read_type(const std::string& field);
  void read_alignment();
  void read_tensor_infos(uint64_t n_tensors);
  void place_tensor_data();

  GgufFile& file_;
  GgufCursor cur_;
};

}  // namespace inferscope
