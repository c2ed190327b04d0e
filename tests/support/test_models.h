// Finding model files in tests: a missing file skips the test with its name, except under CI=true,
// where it fails (a green CI must never hide a failed download).
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace inferscope::test {

inline std::string shared_model_path(const std::string& name) {
  return std::string(INFERSCOPE_TEST_MODELS_DIR) + "/" + name;
}
inline std::string demo_model_path() { return INFERSCOPE_DEMO_MODEL; }
inline bool running_in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

}  // namespace inferscope::test

// Use at the top of a TEST body: binds `var` to the path, or skips/fails when the file is absent.
#define INFERSCOPE_REQUIRE_FILE(var, path_expr)                                            \
  const std::string var = (path_expr);                                                     \
  if (!std::filesystem::exists(var)) {                                                     \
    if (::inferscope::test::running_in_ci()) FAIL() << "model file missing in CI: " << var; \
    GTEST_SKIP() << "model file not found: " << var;                                       \
  }
