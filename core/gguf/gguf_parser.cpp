#include "core/gguf/gguf_parser.h"

#include <limits>

#include "core/gguf/gguf_alignment.h"

namespace inferscope {

namespace {

// Smallest encoding of one value of `t`: the bound used to refuse absurd counts before allocating.
uint64_t min_value_bytes(GgufType t) {
  switch (t) {
    case GgufType::UINT8: case GgufType::INT8: case GgufType::BOOL: return 1;
    case GgufType::UINT16: case GgufType::INT16: return 2;
    case GgufType::UINT32: case GgufType::INT32: case GgufType::FLOAT32: return 4;
    case GgufType::UINT64: case GgufType::INT64: case GgufType::FLOAT64: return 8;
    case GgufType::STRING: return 8;   // the length
    case GgufType::ARRAY: return 12;   // element type + length
  }
  return 1;
}

// The smallest metadata pair: key length, empty key, value type, one-byte value.
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;
// The smallest tensor info: name length, n_dims, one dim, type, offset.
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;

std::string quote(const std::string& s) { return "'" + s + "'"; }

}  // namespace

GgufParser::GgufParser(GgufFile& file) : file_(file), cur_(file.path_, file.base_, file.size_) {}

void GgufParser::parse() {
  uint64_t n_tensors = 0;
  uint64_t n_kv = 0;
  read_header(n_tensors, n_kv);
  read_metadata(n_kv);
  read_alignment();
  read_tensor_infos(n_tensors);
  place_tensor_data();
}

void GgufParser::read_header(uint64_t& n_tensors, uint64_t& n_kv) {
  const auto magic = cur_.read<uint32_t>("magic");
  if (magic != kGgufMagic) {
    std::string shown(reinterpret_cast<const char*>(file_.base_), 4);
    for (char& c : shown)
      if (c < 0x20 || c > 0x7e) c = '?';
    cur_.fail("magic", quote(shown) + " is not 'GGUF' (not a GGUF file)");
  }
  const auto version = cur_.read<uint32_t>("version");
  // A big-endian file stores 3 as 0x03000000.
  if (version > 0xffff && (__builtin_bswap32(version) == 2 || __builtin_bswap32(version) == 3))
    cur_.fail("version", "the file is big-endian, which is not supported");
  if (version == 1) cur_.fail("version", "1 (GGUF v1) is no longer supported; re-convert the model");
  if (version != 2 && version != 3) cur_.fail("version", std::to_string(version) + " is not supported (only 2 and 3)");
  file_.version_ = version;
  n_tensors = cur_.read<uint64_t>("tensor count");
  n_kv = cur_.read<uint64_t>("metadata count");
  // Both counts must fit in what is left, or a hostile header could make us reserve terabytes.
  cur_.check_count(n_kv, kMinKvBytes, "metadata count");
  cur_.check_count(n_tensors, kMinTensorInfoBytes, "tensor count");
}

GgufType GgufParser::read_type(const std::string& field) {
  const auto raw = cur_.read<uint32_t>(field);
  if (raw > static_cast<uint32_t>(GgufType::FLOAT64)) cur_.fail(field, "value type " + std::to_string(raw) + " is unknown");
  return static_cast<GgufType>(raw);
}

void GgufParser::read_metadata(uint64_t n_kv) {
  file_.kv_.reserve(static_cast<size_t>(n_kv));
  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string key = cur_.read_string("metadata #" + std::to_string(i) + " key");
    const std::string field = "metadata " + quote(key);
    if (file_.kv_index_.count(key)) cur_.fail(field, "key appears twice");
    const GgufType type = read_type(field);
    GgufValue value = read_value(type, field, 0);
    file_.kv_index_.emplace(key, file_.kv_.size());
    file_.kv_.emplace_back(std::move(key), std::move(value));
  }
}

GgufValue GgufParser::read_value(GgufType type, const std::string& field, int depth) {
  switch (type) {
    case GgufType::UINT8: return {type, uint64_t{cur_.read<uint8_t>(field)}};
    case GgufType::INT8: return {type, int64_t{cur_.read<int8_t>(field)}};
    case GgufType::UINT16: return {type, uint64_t{cur_.read<uint16_t>(field)}};
    case GgufType::INT16: return {type, int64_t{cur_.read<int16_t>(field)}};
    case GgufType::UINT32: return {type, uint64_t{cur_.read<uint32_t>(field)}};
    case GgufType::INT32: return {type, int64_t{cur_.read<int32_t>(field)}};
    case GgufType::UINT64: return {type, cur_.read<uint64_t>(field)};
    case GgufType::INT64: return {type, cur_.read<int64_t>(field)};
    case GgufType::FLOAT32: return {type, double{cur_.read<float>(field)}};
    case GgufType::FLOAT64: return {type, cur_.read<double>(field)};
    case GgufType::STRING: return {type, cur_.read_string(field)};
    case GgufType::BOOL: {
      const auto b = cur_.read<uint8_t>(field);
      if (b > 1) cur_.fail(field, "bool value " + std::to_string(b) + " is neither 0 nor 1");
      return {type, b == 1};
    }
    case GgufType::ARRAY: {
      const GgufType elem = read_type(field);
      if (elem == GgufType::ARRAY && depth + 1 >= kMaxArrayDepth)
        cur_.fail(field, "arrays nested deeper than " + std::to_string(kMaxArrayDepth) + " levels");
      const auto n = cur_.read<uint64_t>(field);
      cur_.check_count(n, min_value_bytes(elem), field, "array length");
      if (n > kMaxArrayItems)
        cur_.fail(field, "array length " + std::to_string(n) + " is more than the limit of " + std::to_string(kMaxArrayItems));
      GgufArray arr{elem, {}};
      arr.items.reserve(static_cast<size_t>(n));
      for (uint64_t i = 0; i < n; ++i) arr.items.push_back(read_value(elem, field, depth + 1));
      return {type, std::move(arr)};
    }
  }
  // read_type() returns known types only; this satisfies the compiler for out-of-range enums.
  cur_.fail(field, "value type " + std::to_string(static_cast<uint32_t>(type)) + " is unknown");
}

void GgufParser::read_alignment() {
  const GgufValue* v = file_.find("general.alignment");
  if (!v) return;
  const GgufAlignmentCheck check = check_gguf_alignment(*v);
  if (!check.problem.empty()) cur_.fail("metadata 'general.alignment'", check.problem);
  file_.alignment_ = check.alignment;
}

void GgufParser::read_tensor_infos(uint64_t n_tensors) {
  file_.tensors_.reserve(static_cast<size_t>(n_tensors));
  for (uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensorInfo t;
    t.name = cur_.read_string("tensor #" + std::to_string(i) + " name");
    const std::string field = "tensor " + quote(t.name);
    if (file_.tensor_index_.count(t.name)) cur_.fail(field, "name appears twice");
    const auto n_dims = cur_.read<uint32_t>(field);
    if (n_dims == 0 || n_dims > kMaxDims)
      cur_.fail(field, "n_dims " + std::to_string(n_dims) + " is not in 1.." + std::to_string(kMaxDims));
    for (uint32_t d = 0; d < n_dims; ++d) {
      const auto dim = cur_.read<uint64_t>(field);
      if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        cur_.fail(field, "dim " + std::to_string(d) + " is " + std::to_string(dim) + ", more than int64 holds");
      t.dims.push_back(static_cast<int64_t>(dim));
    }
    const auto raw_type = cur_.read<uint32_t>(field);
    const auto info = dtype_info(raw_type);
    if (!info) cur_.fail(field, "type " + std::to_string(raw_type) + " is unknown");
    t.type = info->type;
    t.offset = cur_.read<uint64_t>(field);
    file_.tensor_index_.emplace(t.name, file_.tensors_.size());
    file_.tensors_.push_back(std::move(t));
  }
}

void GgufParser::place_tensor_data() {
  const uint64_t align = file_.alignment_;
  const uint64_t end_of_infos = cur_.offset();
  // Round up to the alignment; the padding can only overflow for an absurd alignment.
  if (end_of_infos > std::numeric_limits<uint64_t>::max() - (align - 1))
    cur_.fail("metadata 'general.alignment'", std::to_string(align) + " overflows the data offset");
  file_.data_offset_ = (end_of_infos + align - 1) / align * align;

  for (auto& t : file_.tensors_) {
    const std::string field = "tensor " + quote(t.name);
    const DTypeInfo& info = dtype_info(t.type);
    // Element count, with every product checked: four dims near 2^62 must not wrap.
    uint64_t rows = 1;
    for (size_t d = 1; d < t.dims.size(); ++d)
      if (__builtin_mul_overflow(rows, static_cast<uint64_t>(t.dims[d]), &rows))
        cur_.fail(field, "dims overflow the element count");
    uint64_t n_elements = 0;
    if (__builtin_mul_overflow(rows, static_cast<uint64_t>(t.dims[0]), &n_elements) ||
        n_elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      cur_.fail(field, "dims overflow the element count");
    if (t.dims[0] % info.block_size != 0)
      cur_.fail(field, "dim 0 (" + std::to_string(t.dims[0]) + ") is not a multiple of the " +
                           std::string(info.name) + " block size " + std::to_string(info.block_size));
    // Bytes = blocks per row * block bytes * rows, each step checked.
    uint64_t row = 0;
    uint64_t n_bytes = 0;
    if (__builtin_mul_overflow(static_cast<uint64_t>(t.dims[0] / info.block_size), uint64_t{info.block_bytes}, &row) ||
        __builtin_mul_overflow(row, rows, &n_bytes))
      cur_.fail(field, "dims overflow the byte size");
    if (t.offset % align != 0)
      cur_.fail(field, "offset " + std::to_string(t.offset) + " is not a multiple of the alignment " + std::to_string(align));
    uint64_t begin = 0;
    uint64_t end = 0;
    if (__builtin_add_overflow(file_.data_offset_, t.offset, &begin) || __builtin_add_overflow(begin, n_bytes, &end) ||
        end > file_.size_)
      cur_.fail(field, "data at offset " + std::to_string(t.offset) + " (" + std::to_string(n_bytes) +
                           " bytes) runs past the end of the file (" + std::to_string(file_.size_) + " bytes, data section at " +
                           std::to_string(file_.data_offset_) + ")");
    t.n_bytes = static_cast<size_t>(n_bytes);
    t.data = file_.base_ + begin;
  }
}

}  // namespace inferscope
