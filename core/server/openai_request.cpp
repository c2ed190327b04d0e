#include "core/server/openai_request.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

namespace inferscope {
namespace {

using nlohmann::json;

constexpr size_t kMaxStops = 16;

ApiError bad(const std::string& param, const std::string& message) { return ApiError(400, message, param); }

// The field's value, or nullptr where it is absent or null (OpenAI's "not given").
const json* field(const json& body, const char* name) {
  const auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

bool boolean(const json& body, const char* name, bool fallback) {
  const json* v = field(body, name);
  if (v == nullptr) return fallback;
  if (!v->is_boolean()) throw bad(name, std::string("'") + name + "' must be a boolean");
  return v->get<bool>();
}

// A number in [lo, hi].
double number(const json& body, const char* name, double fallback, double lo, double hi) {
  const json* v = field(body, name);
  if (v == nullptr) return fallback;
  if (!v->is_number()) throw bad(name, std::string("'") + name + "' must be a number");
  const double x = v->get<double>();
  if (!std::isfinite(x) || x < lo || x > hi) {
    throw bad(name, std::string("'") + name + "' must be between " + json(lo).dump() + " and " + json(hi).dump() +
                        ", got " + v->dump());
  }
  return x;
}

int64_t integer(const json& body, const char* name, int64_t fallback, int64_t lo, int64_t hi) {
  const json* v = field(body, name);
  if (v == nullptr) return fallback;
  if (!v->is_number_integer()) throw bad(name, std::string("'") + name + "' must be an integer");
  const int64_t x = v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(hi) ? hi + 1 : v->get<int64_t>();
  if (x < lo || x > hi) {
    throw bad(name, std::string("'") + name + "' must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                        ", got " + v->dump());
  }
  return x;
}

// A field the engine has no use for: refused unless it holds the value that changes nothing.
void refuse_unless(const json& body, const char* name, bool (*harmless)(const json&)) {
  const json* v = field(body, name);
  if (v != nullptr && !harmless(*v)) throw bad(name, std::string("'") + name + "' is not supported by this server");
}

// A message's text: a string, or a list of text parts joined.
std::string message_text(const json& content, size_t i) {
  const std::string at = "messages[" + std::to_string(i) + "].content";
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) throw bad(at, "'" + at + "' must be a string or a list of text parts");
  std::string text;
  for (size_t j = 0; j < content.size(); ++j) {
    const json& part = content[j];
    const std::string part_at = at + "[" + std::to_string(j) + "]";
    if (!part.is_object() || !part.contains("type") || !part["type"].is_string()) {
      throw bad(part_at, "'" + part_at + "' must be an object with a 'type'");
    }
    if (part["type"] != "text") {
      throw bad(part_at + ".type", "'" + part_at + ".type' is " + part["type"].dump() + ": this server reads text parts only");
    }
    if (!part.contains("text") || !part["text"].is_string()) throw bad(part_at + ".text", "'" + part_at + ".text' must be a string");
    text += part["text"].get<std::string>();
  }
  return text;
}

std::vector<ChatMessage> read_messages(const json& body) {
  const json* messages = field(body, "messages");
  if (messages == nullptr) throw bad("messages", "'messages' is required");
  if (!messages->is_array() || messages->empty()) throw bad("messages", "'messages' must be a non-empty list");
  std::vector<ChatMessage> out;
  for (size_t i = 0; i < messages->size(); ++i) {
    const json& m = (*messages)[i];
    const std::string at = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) throw bad(at, "'" + at + "' must be an object");
    if (!m.contains("role") || !m["role"].is_string()) throw bad(at + ".role", "'" + at + ".role' must be a string");
    std::string role = m["role"].get<std::string>();
    if (role == "developer") role = "system";  // OpenAI's newer name for the system turn
    if (role != "system" && role != "user" && role != "assistant") {
      throw bad(at + ".role", "'" + at + ".role' is \"" + role + "\": this server reads system, user and assistant turns");
    }
    const json* content = field(m, "content");
    if (content == nullptr) throw bad(at + ".content", "'" + at + ".content' is required");
    out.push_back({role, message_text(*content, i)});
  }
  return out;
}

// A prompt: text, token ids, or a list holding one of those.
void read_prompt(const json& body, EngineRequest& r) {
  const json* prompt = field(body, "prompt");
  if (prompt == nullptr) throw bad("prompt", "'prompt' is required");
  const json* one = prompt;
  if (prompt->is_array() && !prompt->empty() && !(*prompt)[0].is_number()) {
    if (prompt->size() > 1) throw bad("prompt", "'prompt' holds " + std::to_string(prompt->size()) + " prompts: send one per request");
    one = &(*prompt)[0];
  }
  if (one->is_string()) {
    r.prompt = one->get<std::string>();
    return;
  }
  if (!one->is_array() || one->empty()) throw bad("prompt", "'prompt' must be a string or a non-empty list of token ids");
  for (const json& id : *one) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > std::numeric_limits<TokenId>::max()) {
      throw bad("prompt", "'prompt' must be a string or a list of token ids; found " + id.dump());
    }
    r.prompt_tokens.push_back(static_cast<TokenId>(id.get<int64_t>()));
  }
}

std::vector<std::string> read_stop(const json& body) {
  const json* stop = field(body, "stop");
  if (stop == nullptr) return {};
  if (stop->is_string()) return {stop->get<std::string>()};
  if (!stop->is_array() || stop->size() > kMaxStops) {
    throw bad("stop", "'stop' must be a string or a list of at most " + std::to_string(kMaxStops) + " strings");
  }
  std::vector<std::string> out;
  for (const json& s : *stop) {
    if (!s.is_string() || s.get<std::string>().empty()) throw bad("stop", "'stop' must hold non-empty strings");
    out.push_back(s.get<std::string>());
  }
  return out;
}

bool is_zero(const json& v) { return v.is_number() && v.get<double>() == 0; }
bool is_one(const json& v) { return v.is_number_integer() && v.get<int64_t>() == 1; }
bool is_false(const json& v) { return v.is_boolean() && !v.get<bool>(); }
bool is_empty(const json& v) { return (v.is_object() || v.is_array() || v.is_string()) && v.empty(); }
bool is_text_format(const json& v) { return v.is_object() && v.value("type", "") == "text"; }
bool is_text_only(const json& v) { return v == json::array({"text"}); }
bool is_none(const json& v) { return v == "none" || is_empty(v); }

}  // namespace

OpenAiRequest read_openai_request(OpenAiRoute route, std::string_view body_text) {
  json body;
  try {
    body = json::parse(body_text);
  } catch (const json::exception& e) {  // a syntax error, or a number beyond a double (out_of_range)
    throw ApiError(400, std::string("the request body is not valid JSON: ") + e.what());
  }
  if (!body.is_object()) throw ApiError(400, "the request body must be a JSON object");
  const bool chat = route == OpenAiRoute::ChatCompletions;

  // What the engine does not do, by name.
  refuse_unless(body, "n", is_one);
  refuse_unless(body, "best_of", is_one);
  refuse_unless(body, "frequency_penalty", is_zero);
  refuse_unless(body, "presence_penalty", is_zero);
  refuse_unless(body, "logit_bias", is_empty);
  refuse_unless(body, "tools", is_empty);
  refuse_unless(body, "functions", is_empty);
  refuse_unless(body, "tool_choice", is_none);
  refuse_unless(body, "function_call", is_none);
  refuse_unless(body, "response_format", is_text_format);
  refuse_unless(body, "modalities", is_text_only);
  refuse_unless(body, "audio", is_empty);
  refuse_unless(body, "prediction", is_empty);
  refuse_unless(body, "echo", is_false);
  refuse_unless(body, "suffix", is_empty);

  OpenAiRequest r;
  r.route = route;
  if (const json* model = field(body, "model")) {
    if (!model->is_string()) throw bad("model", "'model' must be a string");
    r.model = model->get<std::string>();
  }
  if (chat) {
    r.engine.messages = read_messages(body);
  } else {
    read_prompt(body, r.engine);
  }
  // max_completion_tokens is the chat API's newer name for max_tokens.
  const int64_t max_tokens = integer(body, "max_tokens", 0, 1, std::numeric_limits<int32_t>::max());
  r.engine.max_tokens = static_cast<int32_t>(integer(body, "max_completion_tokens", max_tokens, 1, std::numeric_limits<int32_t>::max()));
  // Without a limit a reply runs to the end of the context, as OpenAI's servers do.
  r.engine.up_to_context = true;
  SamplingParams& s = r.engine.sampling;
  s.temperature = static_cast<float>(number(body, "temperature", 1.0, 0, 2));
  s.top_p = static_cast<float>(number(body, "top_p", 1.0, 0, 1));
  if (s.top_p == 0) throw bad("top_p", "'top_p' must be above 0");
  s.top_k = static_cast<int32_t>(integer(body, "top_k", 0, 0, std::numeric_limits<int32_t>::max()));
  s.min_p = static_cast<float>(number(body, "min_p", 0, 0, 1));
  s.repeat_penalty = static_cast<float>(number(body, "repeat_penalty", 1.0, 1e-3, 100));
  s.repeat_last_n = static_cast<int32_t>(integer(body, "repeat_last_n", s.repeat_last_n, 0, std::numeric_limits<int32_t>::max()));
  if (const json* seed = field(body, "seed")) {
    if (!seed->is_number_integer()) throw bad("seed", "'seed' must be an integer");
    s.seed = seed->is_number_unsigned() ? seed->get<uint64_t>() : static_cast<uint64_t>(seed->get<int64_t>());
  }
  // vLLM's and llama-server's extension: run to max_tokens past end-of-generation (benchmarks, serve-sim).
  s.ignore_eos = boolean(body, "ignore_eos", false);
  r.engine.stop = read_stop(body);

  r.stream = boolean(body, "stream", false);
  if (const json* options = field(body, "stream_options")) {
    if (!r.stream) throw bad("stream_options", "'stream_options' is only allowed with \"stream\": true");
    if (!options->is_object()) throw bad("stream_options", "'stream_options' must be an object");
    r.include_usage = boolean(*options, "include_usage", false);
  }
  if (chat) {
    if (boolean(body, "logprobs", false)) r.top_logprobs = static_cast<int32_t>(integer(body, "top_logprobs", 0, 0, kMaxTopLogprobs));
    else if (field(body, "top_logprobs") != nullptr) throw bad("top_logprobs", "'top_logprobs' needs \"logprobs\": true");
  } else {
    r.top_logprobs = static_cast<int32_t>(integer(body, "logprobs", -1, 0, kMaxTopLogprobs));
  }
  if (r.top_logprobs >= 0) {
    r.engine.logits = LogitsOutput::Sampled;
    r.engine.speculate = false;  // one logits row per generated token, in order
  }
  return r;
}

std::string client_label(std::string_view user_agent, std::string_view address) {
  const size_t begin = user_agent.find_first_not_of(' ');
  std::string product;
  if (begin != std::string_view::npos) {
    const std::string_view first = user_agent.substr(begin, user_agent.find(' ', begin) - begin);
    for (char c : first.substr(0, kMaxClientProduct)) product += (c > 0x20 && c < 0x7f) ? c : '?';
    if (first.size() > kMaxClientProduct) product += "\u2026";
  }
  return product.empty() ? std::string(address) : product + " at " + std::string(address);
}

}  // namespace inferscope
