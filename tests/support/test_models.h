// Finding model files in tests: a missing file fails the test with its name, never skips it (a green
// run must never hide a model that was not there).
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

namespace inferscope::test {

// A file of the repository's test models (INFERSCOPE_TEST_MODELS_DIR, tests/models by default).
inline std::string shared_model_path(const std::string& name) {
  return (std::filesystem::path(INFERSCOPE_TEST_MODELS_DIR) / name).string();
}
inline std::string demo_model_path() { return INFERSCOPE_DEMO_MODEL; }
inline std::string gemma3_model_path() { return INFERSCOPE_GEMMA3_MODEL; }
// A file of the source tree (resources/, tests/fixtures/).
inline std::string source_path(const std::string& relative) { return std::string(INFERSCOPE_SOURCE_DIR) + "/" + relative; }
// The bytes of a file of the source tree; throws std::runtime_error naming it when it cannot be read.
inline std::string source_text(const std::string& relative) {
  std::ifstream in(source_path(relative), std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + source_path(relative));
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
// Success when `path` exists; otherwise a failure naming it and where the models come from.
inline ::testing::AssertionResult model_file_exists(const std::string& path) {
  if (std::filesystem::exists(path)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "model file missing: " << path
                                       << " (tests/models/README.md lists the test models; scripts/setup.sh "
                                          "--tests fetches the demo model and the Gemma 3 model)";
}

}  // namespace inferscope::test

// Use at the top of a TEST body: binds `var` to the path, or fails the test when the file is absent.
#define INFERSCOPE_REQUIRE_FILE(var, path_expr) \
  const std::string var = (path_expr);          \
  ASSERT_TRUE(::inferscope::test::model_file_exists(var))
