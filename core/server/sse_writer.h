// Server-sent events as OpenAI streams them: each chunk one "data: <json>" event, then "data: [DONE]".
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace inferscope {

// "data: <compact json>\n\n"
std::string sse_event(const nlohmann::json& data);
// The stream's last event.
inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";

}  // namespace inferscope
