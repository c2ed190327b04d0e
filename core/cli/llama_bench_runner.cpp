#include "core/cli/llama_bench_runner.h"

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <sys/wait.h>

namespace inferscope::cli {
namespace {

// 'text' for the shell, with each ' written as '\''.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The last `n` characters of `text` (its end is where a tool says what went wrong).
std::string tail(const std::string& text, size_t n) { return text.size() <= n ? text : "..." + text.substr(text.size() - n); }

}  // namespace

std::string llama_bench_command(const LlamaBenchTest& t) {
  return quoted(t.llama_bench) + " -m " + quoted(t.model) + " -p " + std::to_string(t.n_prompt) + " -n " +
         std::to_string(t.n_gen) + " -r 1 -t " + std::to_string(t.threads) + " -o json";
}

double run_llama_bench(const LlamaBenchTest& t) {
  const std::string command = llama_bench_command(t);
  // stdout holds the JSON; stderr (its loading log) is kept apart and dropped
  FILE* pipe = ::popen((command + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("--compare-llama-bench: cannot run " + command);
  std::string out;
  std::array<char, 4096> buf;
  for (size_t n; (n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0;) out.append(buf.data(), n);
  const int status = ::pclose(pipe);
  if (status != 0) {
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    throw std::runtime_error("--compare-llama-bench: " + command + " failed (exit " + std::to_string(code) +
                             ")" + (out.empty() ? "" : ": " + tail(out, 300)));
  }
  const nlohmann::json j = nlohmann::json::parse(out, nullptr, false);
  if (!j.is_array() || j.size() != 1 || !j[0].contains("avg_ts") || !j[0]["avg_ts"].is_number()) {
    throw std::runtime_error("--compare-llama-bench: " + command + " printed no single result with avg_ts: " +
                             tail(out, 300));
  }
  return j[0]["avg_ts"].get<double>();
}

}  // namespace inferscope::cli
