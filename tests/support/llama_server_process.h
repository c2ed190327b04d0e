// A real llama.cpp llama-server for the remote-engine tests: started on 127.0.0.1 on a free port with
// the given model and options, ready once /health answers 200, stopped (SIGTERM, then SIGKILL) when
// the object goes. Its log goes to a temporary file, quoted when it fails to start.
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

namespace inferscope::test {

class LlamaServerProcess {
 public:
  // Throws std::runtime_error (with the end of the server's log) when the binary or model is missing
  // or /health is not 200 within `ready_timeout_s`.
  LlamaServerProcess(const std::string& binary, const std::string& model, const std::vector<std::string>& options,
                     double ready_timeout_s = 60);
  ~LlamaServerProcess();
  LlamaServerProcess(const LlamaServerProcess&) = delete;
  LlamaServerProcess& operator=(const LlamaServerProcess&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string log_tail() const;

 private:
  void stop();

  pid_t pid_ = -1;
  int port_ = 0;
  std::string log_path_;
};

}  // namespace inferscope::test
