// Catching what a callback or a step throws, so it cannot escape the engine's loop (and reach
// std::terminate on the engine thread): the caller decides which requests it ends.
#pragma once
#include <exception>
#include <optional>
#include <string>
#include <utility>

namespace inferscope {

// Runs `f`; returns the message of what it threw (std::bad_alloc included), or nullopt when it returned.
template <typename F>
std::optional<std::string> failure_of(F&& f) {
  try {
    std::forward<F>(f)();
  } catch (const std::exception& e) {
    return std::string(e.what());
  } catch (...) {
    return std::string("an exception that is not a std::exception");
  }
  return std::nullopt;
}

}  // namespace inferscope
