// Running inferscope-cli from a test, as a user's shell would.
#pragma once
#include <sys/wait.h>

#include <array>
#include <cstdio>
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

}  // namespace inferscope::test
