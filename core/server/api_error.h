// An error the server answers with, in OpenAI's shape: {"error": {"message", "type", "param", "code"}}
// with its HTTP status. Thrown by the request readers, caught by the routes.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <stdexcept>
#include <string>

namespace inferscope {

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string message, std::string param = {}, std::string type = "invalid_request_error",
           std::string code = {})
      : std::runtime_error(message), status_(status), param_(std::move(param)), type_(std::move(type)), code_(std::move(code)) {}
  int status() const { return status_; }
  // {"error": {...}}: param and code null where they are empty.
  nlohmann::json json() const;

 private:
  int status_;
  std::string param_, type_, code_;
};

}  // namespace inferscope
