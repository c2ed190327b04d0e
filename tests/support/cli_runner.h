// Running inferscope-cli from a test, as a user's shell would.
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace inferscope::test {

struct CliRun {
  int exit_code = -1;
  std::string out;
};

enum class Stderr { Joined, Dropped };

// Runs the binary INFERSCOPE_CLI with `args` (shell syntax); stderr joins stdout or is dropped.
inline CliRun run_cli(const std::string& cli, const std::string& args, Stderr stderr_mode) {
  const std::string cmd = cli + " " + args + (stderr_mode == Stderr::Joined ? " 2>&1" : " 2>/dev/null");
  CliRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Runs INFERSCOPE_CLI with stderr joined (error messages come with the output).
inline CliRun cli(const std::string& args) { return run_cli(INFERSCOPE_CLI, args, Stderr::Joined); }

// Runs INFERSCOPE_CLI expecting exit 0 and parses its stdout as JSON.
inline nlohmann::json cli_json(const std::string& args) {
  const CliRun r = run_cli(INFERSCOPE_CLI, args, Stderr::Dropped);
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.out;
  return nlohmann::json::parse(r.out);
}

}  // namespace inferscope::test
