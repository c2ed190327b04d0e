// The GGUF writer: what it writes must read back identically, byte for byte where it can.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>

#include "core/gguf/gguf_file.h"
#include "core/gguf/gguf_writer.h"
#include "tests/support/test_models.h"

namespace inferscope {
namespace {

namespace fs = std::filesystem;

class GgufWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("inferscope_gguf_writer_" + std::to_string(::getpid()) + "_" + info->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> out(n);
  for (auto& b : out) b = static_cast<uint8_t>(rng() | 1);  // never zero, so padding is distinguishable
  return out;
}

GgufValue typed(GgufType t, uint64_t x) { return {t, x}; }
GgufValue typed(GgufType t, int64_t x) { return {t, x}; }

// One value of every type, at the edges of each range, plus arrays and nested arrays.
std::vector<std::pair<std::string, GgufValue>> every_value_type() {
  using L8 = std::numeric_limits<int8_t>;
  using L16 = std::numeric_limits<int16_t>;
  using L32 = std::numeric_limits<int32_t>;
  using L64 = std::numeric_limits<int64_t>;
  const GgufValue nested = GgufValue::array(GgufType::ARRAY, {GgufValue::i32s({1, 2}), GgufValue::i32s({}), GgufValue::i32s({-3})});
  return {
      {"t.u8", typed(GgufType::UINT8, uint64_t{255})},
      {"t.i8", typed(GgufType::INT8, int64_t{L8::min()})},
      {"t.u16", typed(GgufType::UINT16, uint64_t{65535})},
      {"t.i16", typed(GgufType::INT16, int64_t{L16::min()})},
      {"t.u32", GgufValue::u32(4294967295u)},
      {"t.i32", GgufValue::i32(L32::min())},
      {"t.f32", GgufValue::f32(-1.5e-7f)},
      {"t.bool_true", GgufValue::boolean(true)},
      {"t.bool_false", GgufValue::boolean(false)},
      {"t.string", GgufValue::str(std::string("h\xc3\xa9llo\0world", 12))},  // UTF-8 and an embedded NUL
      {"t.empty_string", GgufValue::str("")},
      {"t.u64", GgufValue::u64(std::numeric_limits<uint64_t>::max())},
      {"t.i64", typed(GgufType::INT64, int64_t{L64::min()})},
      {"t.f64", GgufValue{GgufType::FLOAT64, 3.141592653589793}},
      {"a.strings", GgufValue::strings({"a", "", "<|im_end|>"})},
      {"a.f32", GgufValue::f32s({0.25f, -2.0f})},
      {"a.i32", GgufValue::i32s({7, -7})},
      {"a.u8", GgufValue::array(GgufType::UINT8, {typed(GgufType::UINT8, uint64_t{1}), typed(GgufType::UINT8, uint64_t{2})})},
      {"a.bool", GgufValue::array(GgufType::BOOL, {GgufValue::boolean(true), GgufValue::boolean(false)})},
      {"a.f64", GgufValue::array(GgufType::FLOAT64, {GgufValue{GgufType::FLOAT64, -0.0}})},
      {"a.empty", GgufValue::array(GgufType::INT64, {})},
      {"a.nested", nested},
      {"a.nested3", GgufValue::array(GgufType::ARRAY, {nested, GgufValue::array(GgufType::ARRAY, {GgufValue::strings({"x"})})})},
  };
}

TEST_F(GgufWriterTest, EveryValueTypeRoundTrips) {
  GgufWriter w;
  const auto kv = every_value_type();
  for (const auto& [k, v] : kv) w.set(k, v);
  w.write(path("v.gguf"));
  const auto f = GgufFile::open(path("v.gguf"));
  EXPECT_EQ(f->version(), 3u);
  EXPECT_TRUE(f->tensors().empty());
  ASSERT_EQ(f->metadata().size(), kv.size());
  for (size_t i = 0; i < kv.size(); ++i) {
    EXPECT_EQ(f->metadata()[i].first, kv[i].first);  // insertion order
    EXPECT_TRUE(f->metadata()[i].second == kv[i].second) << kv[i].first << " read back as "
                                                          << f->metadata()[i].second.to_display_string();
  }
  EXPECT_EQ(f->get_string("t.string").size(), 12u);
  EXPECT_EQ(f->get_array("a.nested3").items[0].as_array().items[0].as_array().items[1].as_int(), 2);
}

TEST_F(GgufWriterTest, SetReplacesAndKeepsOrder) {
  GgufWriter w;
  w.set("a", GgufValue::u32(1));
  w.set("b", GgufValue::u32(2));
  w.set("a", GgufValue::str("again"));
  w.write(path("s.gguf"));
  const auto f = GgufFile::open(path("s.gguf"));
  ASSERT_EQ(f->metadata().size(), 2u);
  EXPECT_EQ(f->metadata()[0].first, "a");
  EXPECT_EQ(f->get_string("a"), "again");
  EXPECT_EQ(f->get_int("b"), 2);
}

struct TensorCase {
  std::string name;
  DType type;
  std::vector<int64_t> dims;
};

// Tensors of several dtypes and odd shapes, written with `alignment` (0: leave the key unset).
void check_tensors_round_trip(const std::string& file, uint64_t alignment) {
  const std::vector<TensorCase> cases = {
      {"f32.odd", DType::F32, {3, 5, 7}},
      {"f16.4d", DType::F16, {9, 1, 1, 2}},
      {"q8_0", DType::Q8_0, {64, 3}},
      {"q4_1", DType::Q4_1, {32, 5}},
      {"q4_k", DType::Q4_K, {256, 2}},
      {"q6_k", DType::Q6_K, {512}},
      {"bf16", DType::BF16, {1}},
  };
  GgufWriter w;
  w.set("general.architecture", GgufValue::str("test"));
  if (alignment) w.set("general.alignment", GgufValue::u32(static_cast<uint32_t>(alignment)));
  std::vector<std::vector<uint8_t>> data;
  for (size_t i = 0; i < cases.size(); ++i) {
    int64_t rows = 1;
    for (size_t d = 1; d < cases[i].dims.size(); ++d) rows *= cases[i].dims[d];
    data.push_back(random_bytes(row_bytes(cases[i].type, cases[i].dims[0]) * static_cast<size_t>(rows), static_cast<uint32_t>(i)));
    w.add_tensor(cases[i].name, cases[i].type, cases[i].dims, data.back());
  }
  w.write(file);

  const auto f = GgufFile::open(file);
  const uint64_t align = alignment ? alignment : 32;
  EXPECT_EQ(f->alignment(), align);
  EXPECT_EQ(f->data_offset() % align, 0u);
  ASSERT_EQ(f->tensors().size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    const GgufTensorInfo& t = f->tensors()[i];
    EXPECT_EQ(t.name, cases[i].name);
    EXPECT_EQ(t.type, cases[i].type) << t.name;
    EXPECT_EQ(t.dims, cases[i].dims) << t.name;
    EXPECT_EQ(t.offset % align, 0u) << t.name;
    ASSERT_EQ(t.n_bytes, data[i].size()) << t.name;
    EXPECT_EQ(std::memcmp(t.data, data[i].data(), t.n_bytes), 0) << t.name;
  }
  // Tensors are packed in order, each starting at the next aligned offset.
  for (size_t i = 1; i < cases.size(); ++i) {
    const auto& prev = f->tensors()[i - 1];
    EXPECT_EQ(f->tensors()[i].offset, (prev.offset + prev.n_bytes + align - 1) / align * align);
  }
}

TEST_F(GgufWriterTest, TensorsOfSeveralDtypesDefaultAlignment) { check_tensors_round_trip(path("t.gguf"), 0); }
TEST_F(GgufWriterTest, TensorsWithCustomAlignment) { check_tensors_round_trip(path("t64.gguf"), 64); }
TEST_F(GgufWriterTest, TensorsWithSmallestAlignment) { check_tensors_round_trip(path("t8.gguf"), 8); }
TEST_F(GgufWriterTest, TensorsWithPageAlignment) { check_tensors_round_trip(path("t4k.gguf"), 4096); }

TEST_F(GgufWriterTest, HeaderBytes) {
  GgufWriter w;
  w.set("k", GgufValue::u32(0x01020304));
  w.add_tensor_f32("x", {2}, {1.0f, -2.0f});
  w.write(path("h.gguf"));
  const auto b = read_bytes(path("h.gguf"));
  const std::vector<uint8_t> expected_head = {
      'G', 'G', 'U', 'F', 3, 0, 0, 0,        // magic, version 3
      1, 0, 0, 0, 0, 0, 0, 0,                // one tensor
      1, 0, 0, 0, 0, 0, 0, 0,                // one key
      1, 0, 0, 0, 0, 0, 0, 0, 'k',           // key "k"
      4, 0, 0, 0, 4, 3, 2, 1,                // uint32 0x01020304
      1, 0, 0, 0, 0, 0, 0, 0, 'x',           // tensor name "x"
      1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,    // n_dims 1, dim 2
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,    // type F32, offset 0
  };
  // 74 header bytes, zero padding to 96, the 8 data bytes, zero padding to 128.
  ASSERT_EQ(b.size(), 128u);
  EXPECT_TRUE(std::equal(expected_head.begin(), expected_head.end(), b.begin()));
  EXPECT_TRUE(std::all_of(b.begin() + 74, b.begin() + 96, [](uint8_t x) { return x == 0; }));
  float data[2];
  std::memcpy(data, b.data() + 96, sizeof data);
  EXPECT_EQ(data[0], 1.0f);
  EXPECT_EQ(data[1], -2.0f);
  EXPECT_TRUE(std::all_of(b.begin() + 104, b.end(), [](uint8_t x) { return x == 0; }));
}

// Reading a real file and writing everything back must reproduce it byte for byte: same
// encoding, same alignment, same zero padding as the converter that made it.
void expect_rewrite_identical(const std::string& src, const std::string& copy) {
  const auto f = GgufFile::open(src);
  GgufWriter w;
  for (const auto& [k, v] : f->metadata()) w.set(k, v);
  for (const auto& t : f->tensors()) w.add_tensor(t.name, t.type, t.dims, std::vector<uint8_t>(t.data, t.data + t.n_bytes));
  w.write(copy);
  EXPECT_TRUE(read_bytes(copy) == read_bytes(src)) << copy << " differs from " << src;
}

TEST_F(GgufWriterTest, RewritesStories260KIdentically) {
  INFERSCOPE_REQUIRE_FILE(src, test::shared_model_path("stories260K.gguf"));
  expect_rewrite_identical(src, path("copy.gguf"));
}

TEST_F(GgufWriterTest, RewritesDemoModelIdentically) {
  INFERSCOPE_REQUIRE_FILE(src, test::demo_model_path());
  expect_rewrite_identical(src, path("copy.gguf"));
}

TEST_F(GgufWriterTest, ReplacesExistingFileAndLeavesNoTemporary) {
  GgufWriter w;
  w.set("n", GgufValue::u32(1));
  w.write(path("r.gguf"));
  w.set("n", GgufValue::u32(2));
  w.write(path("r.gguf"));
  EXPECT_EQ(GgufFile::open(path("r.gguf"))->get_int("n"), 2);
  EXPECT_FALSE(fs::exists(path("r.gguf.tmp")));
}

TEST_F(GgufWriterTest, IoFailureNamesThePath) {
  GgufWriter w;
  w.set("n", GgufValue::u32(1));
  const std::string bad = path("no_such_dir/x.gguf");
  try {
    w.write(bad);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(bad));
}

TEST_F(GgufWriterTest, BadValuesThrowBeforeTouchingTheFile) {
  GgufWriter good;
  good.set("n", GgufValue::u32(1));
  good.write(path("keep.gguf"));
  const auto before = read_bytes(path("keep.gguf"));

  const auto expect_invalid = [&](const std::string& key, GgufValue v, const std::string& needle) {
    GgufWriter w;
    w.set(key, std::move(v));
    try {
      w.write(path("keep.gguf"));
      FAIL() << key << ": no error";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  };
  expect_invalid("big.u8", typed(GgufType::UINT8, uint64_t{256}), "does not fit in uint8");
  expect_invalid("neg.u32", typed(GgufType::UINT32, int64_t{-1}), "does not fit in uint32");
  expect_invalid("mixed", GgufValue::array(GgufType::INT32, {GgufValue::i32(1), GgufValue::str("x")}), "array item 1 is string");
  expect_invalid("wrong.holder", GgufValue{GgufType::STRING, uint64_t{3}}, "holds another kind");
  expect_invalid("general.alignment", GgufValue::u32(48), "not a positive power of two");
  expect_invalid("general.alignment", GgufValue::u32(0), "not a positive power of two");
  expect_invalid("general.alignment", GgufValue::u32(4), "not a multiple of 8");
  expect_invalid("general.alignment", GgufValue::str("32"), "string is not an integer");
  EXPECT_EQ(read_bytes(path("keep.gguf")), before);
  EXPECT_FALSE(fs::exists(path("keep.gguf.tmp")));
}

TEST_F(GgufWriterTest, BadTensorsAreRefused) {
  GgufWriter w;
  w.add_tensor_f32("t", {2}, {1, 2});
  EXPECT_THROW(w.add_tensor_f32("t", {2}, {1, 2}), std::invalid_argument);           // duplicate name
  EXPECT_THROW(w.add_tensor_f32("u", {3}, {1, 2}), std::invalid_argument);           // wrong byte count
  EXPECT_THROW(w.add_tensor_f32("v", {1, 1, 1, 1, 1}, {1}), std::invalid_argument);  // five dims
  EXPECT_THROW(w.add_tensor_f32("w", {}, {1}), std::invalid_argument);               // no dims
  EXPECT_THROW(w.add_tensor_f32("x", {int64_t{1} << 40, int64_t{1} << 40}, {}), std::invalid_argument);  // overflow
  EXPECT_THROW(w.add_tensor("q", DType::Q4_0, {31}, std::vector<uint8_t>(18)), std::invalid_argument);  // not whole blocks
}

}  // namespace
}  // namespace inferscope
