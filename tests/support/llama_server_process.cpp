#include "tests/support/llama_server_process.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "core/remote/http_client.h"
#include "tests/support/canned_http_server.h"

extern char** environ;

namespace inferscope::test {
namespace {

bool exited(pid_t pid) {
  int status = 0;
  return ::waitpid(pid, &status, WNOHANG) == pid;
}

}  // namespace

LlamaServerProcess::LlamaServerProcess(const std::string& binary, const std::string& model,
                                       const std::vector<std::string>& options, double ready_timeout_s) {
  if (!std::filesystem::exists(binary)) throw std::runtime_error("llama-server not found at '" + binary + "' (scripts/llama-server.sh builds it)");
  if (!std::filesystem::exists(model)) throw std::runtime_error("model not found: " + model + " (scripts/setup.sh fetches it)");
  port_ = unused_port();
  log_path_ = (std::filesystem::temp_directory_path() / ("llama-server-" + std::to_string(::getpid()) + "-" +
                                                         std::to_string(port_) + ".log")).string();
  std::vector<std::string> argv_strings = {binary, "-m", model, "--host", "127.0.0.1", "--port", std::to_string(port_)};
  argv_strings.insert(argv_strings.end(), options.begin(), options.end());
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  const int spawned = posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) throw std::runtime_error("cannot start " + binary + ": " + std::strerror(spawned));

  HttpRequest health;
  health.url = url() + "/health";
  health.total_timeout_s = 2;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(ready_timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    if (exited(pid_)) {
      pid_ = -1;
      throw std::runtime_error("llama-server exited while starting:\n" + log_tail());
    }
    try {
      http_perform(health);  // 503 while the model loads, 200 once it serves
      return;
    } catch (const HttpError&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  stop();
  throw std::runtime_error("llama-server did not become ready in " + std::to_string(ready_timeout_s) + " s:\n" + log_tail());
}

LlamaServerProcess::~LlamaServerProcess() {
  stop();
  std::filesystem::remove(log_path_);
}

void LlamaServerProcess::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  for (int i = 0; i < 50 && !exited(pid_); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  if (::kill(pid_, 0) == 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  pid_ = -1;
}

std::string LlamaServerProcess::log_tail() const {
  std::ifstream in(log_path_);
  std::stringstream all;
  all << in.rdbuf();
  const std::string text = all.str();
  return text.size() > 3000 ? text.substr(text.size() - 3000) : text;
}

}  // namespace inferscope::test
