#include "core/remote/chat_stream.h"

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

#include "core/common/json_field.h"
#include "core/remote/text_excerpt.h"

namespace inferscope {

namespace {

using nlohmann::json;

// obj[key] as text; nullopt when absent or null; throws naming `where.key` when it is not a string.
std::optional<std::string> optional_string(const json& obj, const char* key, const std::string& where) {
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) throw std::runtime_error(where + "." + key + " is not a string: " + text_excerpt(it->dump()));
  return it->get<std::string>();
}

// The object at obj[key]; nullptr when absent or null; throws naming `where.key` when not an object.
const json* optional_object(const json& obj, const char* key, const std::string& where) {
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  if (!it->is_object()) throw std::runtime_error(where + "." + key + " is not an object: " + text_excerpt(it->dump()));
  return &*it;
}

// A server's error object ({"message", "type", "code"}), or whatever else it sent in its place.
ServerError server_error_from(const json& error) {
  if (error.is_string()) return {error.get<std::string>(), "", ""};
  if (!error.is_object()) return {error.dump(), "", ""};
  auto text_of = [&](const char* key) {
    const auto it = error.find(key);
    if (it == error.end() || it->is_null()) return std::string();
    return it->is_string() ? it->get<std::string>() : it->dump();
  };
  ServerError out{text_of("message"), text_of("type"), text_of("code")};
  if (out.message.empty()) out.message = error.dump();
  return out;
}

void decode_choice(const json& choice, int position, std::vector<ChatEvent>& out) {
  const std::string where = "choices[" + std::to_string(position) + "]";
  if (!choice.is_object()) throw std::runtime_error(where + " is not an object");
  const int index = choice.contains("index") ? json_field<int>(choice, "index", where) : position;
  // A streamed chat chunk carries `delta`, a whole chat response `message`, text completion `text`.
  const json* body = optional_object(choice, "delta", where);
  std::string body_where = where + ".delta";
  if (!body) {
    body = optional_object(choice, "message", where);
    body_where = where + ".message";
  }
  if (body) {
    auto reasoning = optional_string(*body, "reasoning_content", body_where);
    if (!reasoning) reasoning = optional_string(*body, "reasoning", body_where);
    if (reasoning && !reasoning->empty()) out.push_back(ReasoningDelta{index, *reasoning});
    const auto content = optional_string(*body, "content", body_where);
    if (content && !content->empty()) out.push_back(ContentDelta{index, *content});
  }
  const auto text = optional_string(choice, "text", where);
  if (text && !text->empty()) out.push_back(ContentDelta{index, *text});
  if (const auto reason = optional_string(choice, "finish_reason", where)) out.push_back(FinishReason{index, *reason});
}

ServerTimings decode_timings(const json& t) {
  ServerTimings out;
  out.prompt_n = json_field<int64_t>(t, "prompt_n", "timings");
  out.prompt_ms = json_field<double>(t, "prompt_ms", "timings");
  out.predicted_n = json_field<int64_t>(t, "predicted_n", "timings");
  out.predicted_ms = json_field<double>(t, "predicted_ms", "timings");
  if (t.contains("draft_n")) out.draft_n = json_field<int64_t>(t, "draft_n", "timings");
  if (t.contains("draft_n_accepted")) out.draft_n_accepted = json_field<int64_t>(t, "draft_n_accepted", "timings");
  return out;
}

void decode_chunk(const json& chunk, std::vector<ChatEvent>& out) {
  if (!chunk.is_object()) throw std::runtime_error("payload is not a JSON object");
  if (chunk.contains("error")) {
    out.push_back(server_error_from(chunk.at("error")));
    return;
  }
  // vLLM's older error shape puts the fields at the top level, marked "object": "error".
  if (optional_string(chunk, "object", "payload") == "error") {
    out.push_back(server_error_from(chunk));
    return;
  }
  if (const auto choices = chunk.find("choices"); choices != chunk.end() && !choices->is_null()) {
    if (!choices->is_array()) throw std::runtime_error("choices is not an array");
    for (size_t i = 0; i < choices->size(); ++i) decode_choice((*choices)[i], static_cast<int>(i), out);
  }
  if (const json* usage = optional_object(chunk, "usage", "payload")) {
    out.push_back(UsageReport{json_field<int64_t>(*usage, "prompt_tokens", "usage"),
                              json_field<int64_t>(*usage, "completion_tokens", "usage")});
  }
  if (const json* timings = optional_object(chunk, "timings", "payload")) out.push_back(decode_timings(*timings));
}

}  // namespace

std::vector<ChatEvent> decode_completion_payload(std::string_view payload) {
  std::vector<ChatEvent> out;
  try {
    decode_chunk(json::parse(payload), out);
  } catch (const json::parse_error& e) {
    // nlohmann counts bytes from 1; one past the end means the text stopped before the JSON did.
    const std::string where = e.byte > payload.size() ? "cut short" : "at byte " + std::to_string(e.byte);
    return {ProtocolError{"malformed JSON (" + where + ") in data payload: " + text_excerpt(payload)}};
  } catch (const json::out_of_range& e) {  // parse's "number overflow" (out_of_range.406): beyond a double
    return {ProtocolError{std::string(e.what()) + " in data payload: " + text_excerpt(payload)}};
  } catch (const std::runtime_error& e) {
    return {ProtocolError{std::string(e.what()) + " in data payload: " + text_excerpt(payload)}};
  }
  return out;
}

ChatStreamDecoder::ChatStreamDecoder() : sse_({"error"}) {}

std::vector<ChatEvent> ChatStreamDecoder::feed(std::string_view bytes) {
  std::vector<ChatEvent> out;
  for (const SseEvent& event : sse_.feed(bytes)) decode_event(event, out);
  return out;
}

std::vector<ChatEvent> ChatStreamDecoder::finish() {
  if (const auto cut = sse_.finish()) {
    return {ProtocolError{"stream ended in the middle of an event, which was discarded: " + text_excerpt(*cut)}};
  }
  if (!done_ && !server_error_seen_) return {ProtocolError{"stream ended without data: [DONE]"}};
  return {};
}

void ChatStreamDecoder::decode_event(const SseEvent& event, std::vector<ChatEvent>& out) {
  if (done_) {
    out.push_back(ProtocolError{"event after data: [DONE]: " + text_excerpt(event.data)});
    return;
  }
  // llama-server's older streams sent an error as an `error: {...}` line, the error object itself.
  if (const auto error_line = event.extra_fields.find("error"); error_line != event.extra_fields.end()) {
    const json error = json::parse(error_line->second, nullptr, /*allow_exceptions=*/false);
    out.push_back(error.is_discarded() ? ServerError{error_line->second, "", ""} : server_error_from(error));
    server_error_seen_ = true;
  }
  if (event.data.empty()) return;
  if (event.data == "[DONE]") {
    done_ = true;
    out.push_back(StreamDone{});
    return;
  }
  for (ChatEvent& e : decode_completion_payload(event.data)) {
    server_error_seen_ = server_error_seen_ || std::holds_alternative<ServerError>(e);
    out.push_back(std::move(e));
  }
}

}  // namespace inferscope
