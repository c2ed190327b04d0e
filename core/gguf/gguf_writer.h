// Writes a GGUF v3 file: metadata, then tensor infos, then aligned tensor data.
// The file appears atomically (written to PATH.tmp, then renamed).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/gguf/gguf_value.h"
#include "kernels/format/dtype.h"

namespace inferscope {

class GgufWriter {
 public:
  void set(const std::string& key, GgufValue value);  // replaces an existing key, keeps order
  // dims in ggml order (dims[0] contiguous); bytes must be row_bytes(type, dims[0]) * rows.
  void add_tensor(const std::string& name, DType type, std::vector<int64_t> dims, std::vector<uint8_t> bytes);
  void add_tensor_f32(const std::string& name, std::vector<int64_t> dims, const std::vector<float>& values);
  // Throws std::runtime_error naming the path on I/O failure; leaves no partial file at `path`.
  void write(const std::string& path) const;

 private:
  struct Tensor { std::string name; DType type; std::vector<int64_t> dims; std::vector<uint8_t> bytes; };
  std::vector<std::pair<std::string, GgufValue>> kv_;
  std::vector<Tensor> tensors_;
};

}  // namespace inferscope
