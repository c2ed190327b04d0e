#include "core/gguf/gguf_writer.h"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <utility>

#include "core/gguf/gguf_alignment.h"

namespace inferscope {

namespace {

constexpr uint32_t kVersion = 3;
constexpr uint64_t kDefaultAlignment = 32;

// Little-endian encoding into a growing buffer (the whole header is built before any file I/O,
// so a bad value throws without touching the disk).
class Encoder {
 public:
  std::vector<uint8_t> bytes;

  template <typename T>
  void put(T x) {
    const size_t at = bytes.size();
    bytes.resize(at + sizeof(T));
    std::memcpy(bytes.data() + at, &x, sizeof(T));
  }
  void put_string(const std::string& s) {
    put<uint64_t>(s.size());
    bytes.insert(bytes.end(), s.begin(), s.end());
  }

  void put_value(const GgufValue& v, const std::string& key) {
    switch (v.type) {
      case GgufType::UINT8: return put(integer<uint8_t>(v, key));
      case GgufType::INT8: return put(integer<int8_t>(v, key));
      case GgufType::UINT16: return put(integer<uint16_t>(v, key));
      case GgufType::INT16: return put(integer<int16_t>(v, key));
      case GgufType::UINT32: return put(integer<uint32_t>(v, key));
      case GgufType::INT32: return put(integer<int32_t>(v, key));
      case GgufType::UINT64: return put(integer<uint64_t>(v, key));
      case GgufType::INT64: return put(integer<int64_t>(v, key));
      case GgufType::FLOAT32: return put(static_cast<float>(real(v, key)));
      case GgufType::FLOAT64: return put(real(v, key));
      case GgufType::BOOL: return put(static_cast<uint8_t>(holding<bool>(v, key) ? 1 : 0));
      case GgufType::STRING: return put_string(holding<std::string>(v, key));
      case GgufType::ARRAY: {
        const auto& a = holding<GgufArray>(v, key);
        put(static_cast<uint32_t>(a.elem_type));
        put<uint64_t>(a.items.size());
        for (size_t i = 0; i < a.items.size(); ++i) {
          if (a.items[i].type != a.elem_type)
            bad(key, "array item " + std::to_string(i) + " is " + gguf_type_name(a.items[i].type) + ", not " +
                         gguf_type_name(a.elem_type));
          put_value(a.items[i], key);
        }
        return;
      }
    }
    bad(key, "value type " + std::to_string(static_cast<uint32_t>(v.type)) + " is unknown");
  }

 private:
  [[noreturn]] static void bad(const std::string& key, const std::string& problem) {
    throw std::invalid_argument("metadata '" + key + "': " + problem);
  }

  // The variant alternative that the type id promises.
  template <typename A>
  static const A& holding(const GgufValue& v, const std::string& key) {
    if (const auto* a = std::get_if<A>(&v.v)) return *a;
    bad(key, std::string("a ") + gguf_type_name(v.type) + " value holds another kind of data");
  }

  // An integer stored as int64 or uint64, narrowed to T only when it fits.
  template <typename T>
  static T integer(const GgufValue& v, const std::string& key) {
    using L = std::numeric_limits<T>;
    if (const auto* u = std::get_if<uint64_t>(&v.v); u && *u <= static_cast<uint64_t>(L::max())) return static_cast<T>(*u);
    if (const auto* i = std::get_if<int64_t>(&v.v); i && std::in_range<T>(*i)) return static_cast<T>(*i);
    if (!v.is_integer()) bad(key, std::string("a ") + gguf_type_name(v.type) + " value holds no integer");
    bad(key, v.to_display_string() + " does not fit in " + gguf_type_name(v.type));
  }

  static double real(const GgufValue& v, const std::string& key) { return holding<double>(v, key); }
};

uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

// general.alignment when set (validated), else the GGUF default.
uint64_t alignment_of(const std::vector<std::pair<std::string, GgufValue>>& kv) {
  for (const auto& [key, value] : kv) {
    if (key != "general.alignment") continue;
    const GgufAlignmentCheck check = check_gguf_alignment(value);
    if (!check.problem.empty()) throw std::invalid_argument("metadata 'general.alignment': " + check.problem);
    return check.alignment;
  }
  return kDefaultAlignment;
}

// A FILE* that throws std::runtime_error naming the path on any failure.
class OutFile {
 public:
  explicit OutFile(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "wb")) {
    if (!f_) fail("cannot create");
  }
  ~OutFile() {
    if (f_) std::fclose(f_);
  }
  void write(const void* p, size_t n) {
    if (n != 0 && std::fwrite(p, 1, n, f_) != n) fail("write failed");
  }
  void zeros(size_t n) {
    static const uint8_t kZeros[256] = {};
    for (size_t done = 0; done < n;) {
      const size_t chunk = std::min(n - done, sizeof kZeros);
      write(kZeros, chunk);
      done += chunk;
    }
  }
  // Flushes to disk so the rename below publishes complete contents.
  void close() {
    if (std::fflush(f_) != 0 || ::fsync(fileno(f_)) != 0) fail("write failed");
    const int rc = std::fclose(f_);
    f_ = nullptr;
    if (rc != 0) fail("close failed");
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    throw std::runtime_error(path_ + ": " + what + ": " + std::strerror(errno));
  }
  std::string path_;
  std::FILE* f_;
};

}  // namespace

void GgufWriter::set(const std::string& key, GgufValue value) {
  for (auto& [k, v] : kv_) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  kv_.emplace_back(key, std::move(value));
}

void GgufWriter::add_tensor(const std::string& name, DType type, std::vector<int64_t> dims, std::vector<uint8_t> bytes) {
  const auto bad = [&](const std::string& problem) { throw std::invalid_argument("tensor '" + name + "': " + problem); };
  for (const auto& t : tensors_)
    if (t.name == name) bad("name added twice");
  if (dims.empty() || dims.size() > 4) bad(std::to_string(dims.size()) + " dims is not in 1..4");
  // Rows and bytes with checked products, so absurd dims fail here instead of wrapping.
  uint64_t rows = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] < 0) bad("dim " + std::to_string(d) + " is negative");
    if (d > 0 && __builtin_mul_overflow(rows, static_cast<uint64_t>(dims[d]), &rows)) bad("dims overflow");
  }
  uint64_t expected = 0;
  if (__builtin_mul_overflow(uint64_t{row_bytes(type, dims[0])}, rows, &expected)) bad("dims overflow");
  if (bytes.size() != expected)
    bad(std::to_string(bytes.size()) + " bytes given, " + std::to_string(expected) + " expected");
  tensors_.push_back({name, type, std::move(dims), std::move(bytes)});
}

void GgufWriter::add_tensor_f32(const std::string& name, std::vector<int64_t> dims, const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());  // memcpy(null, ...) is UB
  add_tensor(name, DType::F32, std::move(dims), std::move(bytes));
}

void GgufWriter::write(const std::string& path) const {
  static_assert(std::endian::native == std::endian::little, "the encoder writes host order");
  const uint64_t align = alignment_of(kv_);

  // Header, metadata and tensor infos, with each tensor's offset in the data section.
  Encoder head;
  head.put(kGgufMagic);
  head.put(kVersion);
  head.put<uint64_t>(tensors_.size());
  head.put<uint64_t>(kv_.size());
  for (const auto& [key, value] : kv_) {
    head.put_string(key);
    head.put(static_cast<uint32_t>(value.type));
    head.put_value(value, key);
  }
  uint64_t offset = 0;
  for (const auto& t : tensors_) {
    head.put_string(t.name);
    head.put(static_cast<uint32_t>(t.dims.size()));
    for (int64_t d : t.dims) head.put(static_cast<uint64_t>(d));
    head.put(static_cast<uint32_t>(t.type));
    head.put(offset);
    offset = align_up(offset + t.bytes.size(), align);
  }

  const std::string tmp = path + ".tmp";
  try {
    OutFile out(tmp);
    out.write(head.bytes.data(), head.bytes.size());
    out.zeros(align_up(head.bytes.size(), align) - head.bytes.size());
    // Each tensor is padded to the alignment so the next one starts aligned.
    for (const auto& t : tensors_) {
      out.write(t.bytes.data(), t.bytes.size());
      out.zeros(align_up(t.bytes.size(), align) - t.bytes.size());
    }
    out.close();
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      throw std::runtime_error(path + ": cannot rename " + tmp + ": " + std::strerror(errno));
  } catch (...) {
    std::remove(tmp.c_str());  // never leave a partial file behind
    throw;
  }
}

}  // namespace inferscope
