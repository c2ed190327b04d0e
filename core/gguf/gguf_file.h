// A GGUF file (v2 or v3) opened over mmap: metadata, tensor infos, and pointers into tensor data.
// Every size, count, offset and string length is checked against the file before use.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/gguf/gguf_value.h"
#include "kernels/format/dtype.h"

namespace inferscope {

// Every problem with a model file: the message names the file, the field and the value.
class GgufError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct GgufTensorInfo {
  std::string name;
  std::vector<int64_t> dims;  // ggml order: dims[0] (ne0) is the contiguous (input) dimension
  DType type = DType::F32;
  uint64_t offset = 0;        // from the start of the tensor data section
  size_t n_bytes = 0;
  const uint8_t* data = nullptr;  // into the mapping
  int64_t n_elements() const;
};

class GgufFile {
 public:
  // Throws GgufError. The mapping lives as long as the GgufFile.
  static std::unique_ptr<GgufFile> open(const std::string& path);
  // Parses a GGUF image already in memory (tests, fuzzing); `data` must outlive the result and
  // `name` stands for the path in messages.
  static std::unique_ptr<GgufFile> open_bytes(const uint8_t* data, size_t size, const std::string& name);
  ~GgufFile();
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }  // general.alignment, default 32
  uint64_t data_offset() const { return data_offset_; }
  size_t file_size() const { return size_; }

  // Metadata in file order, and by key.
  const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return kv_; }
  const GgufValue* find(const std::string& key) const;
  bool has(const std::string& key) const { return find(key) != nullptr; }
  // Typed getters: throw GgufError "FILE: metadata KEY: ..." when missing or of the wrong type.
  int64_t get_int(const std::string& key) const;
  double get_float(const std::string& key) const;
  bool get_bool(const std::string& key) const;
  const std::string& get_string(const std::string& key) const;
  const GgufArray& get_array(const std::string& key) const;
  // Optional forms: the default when the key is absent; still an error if present with a bad type.
  int64_t get_int_or(const std::string& key, int64_t fallback) const;
  double get_float_or(const std::string& key, double fallback) const;
  bool get_bool_or(const std::string& key, bool fallback) const;
  std::string get_string_or(const std::string& key, const std::string& fallback) const;

  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* find_tensor(const std::string& name) const;
  // Throws GgufError naming the file and tensor when absent.
  const GgufTensorInfo& tensor(const std::string& name) const;

 private:
  GgufFile() = default;
  friend class GgufParser;
  std::string path_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  const uint8_t* base_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;  // base_ is our mmap (unmapped in the destructor), not caller memory
  std::vector<std::pair<std::string, GgufValue>> kv_;
  std::map<std::string, size_t> kv_index_;
  std::vector<GgufTensorInfo> tensors_;
  std::map<std::string, size_t> tensor_index_;
};

}  // namespace inferscope
