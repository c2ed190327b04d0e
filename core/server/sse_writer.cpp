#include "core/server/sse_writer.h"

#include <nlohmann/json.hpp>

namespace inferscope {

// A compact dump has no newline, so one event never spans a blank line; invalid UTF-8 (a client's
// text echoed) is replaced rather than thrown on.
std::string sse_event(const nlohmann::json& data) {
  return "data: " + data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n\n";
}

}  // namespace inferscope
