#include "core/gguf/gguf_value.h"

#include <cstdio>
#include <limits>
#include <stdexcept>

namespace inferscope {

const char* gguf_type_name(GgufType t) {
  switch (t) {
    case GgufType::UINT8: return "uint8";
    case GgufType::INT8: return "int8";
    case GgufType::UINT16: return "uint16";
    case GgufType::INT16: return "int16";
    case GgufType::UINT32: return "uint32";
    case GgufType::INT32: return "int32";
    case GgufType::FLOAT32: return "float32";
    case GgufType::BOOL: return "bool";
    case GgufType::STRING: return "string";
    case GgufType::ARRAY: return "array";
    case GgufType::UINT64: return "uint64";
    case GgufType::INT64: return "int64";
    case GgufType::FLOAT64: return "float64";
  }
  return "unknown";
}

GgufValue GgufValue::u32(uint32_t x) { return {GgufType::UINT32, uint64_t{x}}; }
GgufValue GgufValue::i32(int32_t x) { return {GgufType::INT32, int64_t{x}}; }
GgufValue GgufValue::u64(uint64_t x) { return {GgufType::UINT64, x}; }
GgufValue GgufValue::f32(float x) { return {GgufType::FLOAT32, double{x}}; }
GgufValue GgufValue::boolean(bool x) { return {GgufType::BOOL, x}; }
GgufValue GgufValue::str(std::string s) { return {GgufType::STRING, std::move(s)}; }

GgufValue GgufValue::array(GgufType elem_type, std::vector<GgufValue> items) {
  return {GgufType::ARRAY, GgufArray{elem_type, std::move(items)}};
}

GgufValue GgufValue::strings(const std::vector<std::string>& items) {
  std::vector<GgufValue> values;
  values.reserve(items.size());
  for (const auto& s : items) values.push_back(str(s));
  return array(GgufType::STRING, std::move(values));
}

GgufValue GgufValue::f32s(const std::vector<float>& items) {
  std::vector<GgufValue> values;
  values.reserve(items.size());
  for (float x : items) values.push_back(f32(x));
  return array(GgufType::FLOAT32, std::move(values));
}

GgufValue GgufValue::i32s(const std::vector<int32_t>& items) {
  std::vector<GgufValue> values;
  values.reserve(items.size());
  for (int32_t x : items) values.push_back(i32(x));
  return array(GgufType::INT32, std::move(values));
}

bool GgufValue::is_integer() const {
  return std::holds_alternative<uint64_t>(v) || std::holds_alternative<int64_t>(v);
}

bool GgufValue::is_float() const { return std::holds_alternative<double>(v); }

int64_t GgufValue::as_int() const {
  if (const auto* u = std::get_if<uint64_t>(&v)) {
    if (*u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      throw std::runtime_error(std::to_string(*u) + " does not fit in int64");
    return static_cast<int64_t>(*u);
  }
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  throw std::runtime_error(std::string(gguf_type_name(type)) + " is not an integer");
}

double GgufValue::as_float() const {
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* u = std::get_if<uint64_t>(&v)) return static_cast<double>(*u);
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  throw std::runtime_error(std::string(gguf_type_name(type)) + " is not a number");
}

bool GgufValue::as_bool() const {
  if (const auto* b = std::get_if<bool>(&v)) return *b;
  throw std::runtime_error(std::string(gguf_type_name(type)) + " is not a bool");
}

const std::string& GgufValue::as_string() const {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  throw std::runtime_error(std::string(gguf_type_name(type)) + " is not a string");
}

const GgufArray& GgufValue::as_array() const {
  if (const auto* a = std::get_if<GgufArray>(&v)) return *a;
  throw std::runtime_error(std::string(gguf_type_name(type)) + " is not an array");
}

namespace {

// Quotes a string for display, escaping control characters and cutting very long ones.
std::string quoted(const std::string& s) {
  constexpr size_t kMaxChars = 64;
  std::string out = "\"";
  for (size_t i = 0; i < s.size() && i < kMaxChars; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > kMaxChars) out += "...";
  return out + "\"";
}

}  // namespace

std::string GgufValue::to_display_string(size_t max_items) const {
  if (const auto* u = std::get_if<uint64_t>(&v)) return std::to_string(*u);
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const auto* s = std::get_if<std::string>(&v)) return quoted(*s);
  if (const auto* d = std::get_if<double>(&v)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", *d);
    return buf;
  }
  const auto& a = std::get<GgufArray>(v);
  std::string out = "[";
  for (size_t i = 0; i < a.items.size() && i < max_items; ++i) {
    if (i > 0) out += ", ";
    out += a.items[i].to_display_string(max_items);
  }
  if (a.items.size() > max_items) out += ", ... " + std::to_string(a.items.size()) + " items";
  return out + "]";
}

bool operator==(const GgufArray& a, const GgufArray& b) {
  return a.elem_type == b.elem_type && a.items == b.items;
}

bool operator==(const GgufValue& a, const GgufValue& b) { return a.type == b.type && a.v == b.v; }

}  // namespace inferscope
