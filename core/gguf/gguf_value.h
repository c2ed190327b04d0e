// One GGUF metadata value: a scalar, a string, or an array of values (arrays may nest).
#pragma once
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace inferscope {

// The file's first four bytes, "GGUF", read as a little-endian uint32.
inline constexpr uint32_t kGgufMagic = 0x46554747;

// Type ids as stored in the file.
enum class GgufType : uint32_t {
  UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6,
  BOOL = 7, STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12,
};
const char* gguf_type_name(GgufType t);

struct GgufValue;
struct GgufArray {
  GgufType elem_type = GgufType::UINT8;
  std::vector<GgufValue> items;
};

struct GgufValue {
  GgufType type = GgufType::UINT8;
  // Integers (any width, sign-extended or zero-extended) in int64/uint64, floats in double.
  std::variant<uint64_t, int64_t, double, bool, std::string, GgufArray> v;

  static GgufValue u32(uint32_t x);
  static GgufValue i32(int32_t x);
  static GgufValue u64(uint64_t x);
  static GgufValue f32(float x);
  static GgufValue boolean(bool x);
  static GgufValue str(std::string s);
  static GgufValue array(GgufType elem_type, std::vector<GgufValue> items);
  static GgufValue strings(const std::vector<std::string>& items);
  static GgufValue f32s(const std::vector<float>& items);
  static GgufValue i32s(const std::vector<int32_t>& items);

  bool is_integer() const;
  bool is_float() const;
  // Conversions; each throws std::runtime_error (caller adds file/key) when the type does not fit.
  int64_t as_int() const;
  double as_float() const;  // integers convert too
  bool as_bool() const;
  const std::string& as_string() const;
  const GgufArray& as_array() const;
  std::string to_display_string(size_t max_items = 8) const;  // for `inspect`
};

// Deep equality: same type ids and the same values (element by element for arrays).
bool operator==(const GgufArray& a, const GgufArray& b);
bool operator==(const GgufValue& a, const GgufValue& b);

}  // namespace inferscope
