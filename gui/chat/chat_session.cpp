#include "gui/chat/chat_session.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/common/json_field.h"

namespace inferscope::gui {
namespace {

constexpr const char* kFormat = "inferscope-session";
constexpr int kVersion = 1;

nlohmann::json stats_json(const ReplyStats& s) {
  return {{"time_unix_ms", s.time_unix_ms}, {"prompt_tokens", s.prompt_tokens},  {"tokens", s.tokens},
          {"ttft_s", s.ttft_s},             {"tokens_per_second", s.tokens_per_second},
          {"seconds", s.seconds},           {"finish_reason", s.finish_reason}, {"engine", s.engine}};
}

// Reads j[key] as T (json_fits: a number T cannot hold is of the wrong type), or throws naming the field.
template <typename T>
T field(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key)) throw std::runtime_error(where + ": missing field '" + key + "'");
  try {
    if (json_fits<T>(j.at(key))) return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
  }
  throw std::runtime_error(where + ": field '" + key + "' has the wrong type: " + j.at(key).dump());
}

ReplyStats stats_from(const nlohmann::json& j, const std::string& where) {
  ReplyStats s;
  s.time_unix_ms = field<int64_t>(j, "time_unix_ms", where);
  s.prompt_tokens = field<int32_t>(j, "prompt_tokens", where);
  s.tokens = field<int32_t>(j, "tokens", where);
  s.ttft_s = field<double>(j, "ttft_s", where);
  s.tokens_per_second = field<double>(j, "tokens_per_second", where);
  s.seconds = field<double>(j, "seconds", where);
  s.finish_reason = field<std::string>(j, "finish_reason", where);
  s.engine = field<std::string>(j, "engine", where);
  return s;
}

// Probabilities keep 4 decimals in the file: what a tooltip shows, at a fraction of the size.
double rounded(float p) { return std::round(static_cast<double>(p) * 1e4) / 1e4; }

nlohmann::json tokens_json(const std::vector<TracedToken>& tokens) {
  nlohmann::json out = nlohmann::json::array();
  for (const TracedToken& t : tokens) {
    nlohmann::json j = {{"text", t.text}, {"origin", token_origin_name(t.origin)}, {"p", rounded(t.p)}, {"q", rounded(t.q)}};
    if (t.refused) j["refused"] = true;
    out.push_back(std::move(j));
  }
  return out;
}

std::vector<TracedToken> tokens_from(const nlohmann::json& j, const std::string& where) {
  if (!j.is_array()) throw std::runtime_error(where + " is not an array");
  std::vector<TracedToken> out;
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string w = where + "[" + std::to_string(i) + "]";
    TracedToken t;
    t.text = field<std::string>(j[i], "text", w);
    const std::string origin = field<std::string>(j[i], "origin", w);
    const std::optional<TokenOrigin> o = token_origin_from_name(origin);
    if (!o) throw std::runtime_error(w + ": unknown origin \"" + origin + "\"");
    t.origin = *o;
    t.p = field<float>(j[i], "p", w);
    t.q = field<float>(j[i], "q", w);
    t.refused = j[i].contains("refused") && field<bool>(j[i], "refused", w);
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

std::vector<ChatMessage> ChatSession::chat_messages() const {
  std::vector<ChatMessage> out;
  if (!system_prompt.empty()) out.push_back({"system", system_prompt});
  for (const SessionMessage& m : messages) out.push_back({m.role, m.content});
  return out;
}

nlohmann::json session_to_json(const ChatSession& s) {
  nlohmann::json messages = nlohmann::json::array();
  for (const SessionMessage& m : s.messages) {
    nlohmann::json jm = {{"role", m.role}, {"content", m.content}};
    if (m.role == "assistant") jm["stats"] = stats_json(m.stats);
    if (!m.reasoning.empty()) jm["reasoning"] = m.reasoning;
    if (!m.note.empty()) jm["note"] = m.note;
    if (!m.tokens.empty()) jm["tokens"] = tokens_json(m.tokens);
    messages.push_back(jm);
  }
  nlohmann::json timeline = nlohmann::json::array();
  for (const ReplyStats& r : s.timeline) timeline.push_back(stats_json(r));
  const SamplingParams& p = s.sampling;
  return {{"format", kFormat},
          {"version", kVersion},
          {"id", s.id},
          {"name", s.name},
          {"created_unix_ms", s.created_unix_ms},
          {"system_prompt", s.system_prompt},
          {"sampling",
           {{"temperature", p.temperature}, {"top_k", p.top_k}, {"top_p", p.top_p}, {"min_p", p.min_p},
            {"repeat_penalty", p.repeat_penalty}, {"repeat_last_n", p.repeat_last_n}, {"seed", p.seed}}},
          {"max_tokens", s.max_tokens},
          {"messages", messages},
          {"timeline", timeline}};
}

ChatSession session_from_json(const nlohmann::json& j, const std::string& where) {
  if (field<std::string>(j, "format", where) != kFormat) {
    throw std::runtime_error(where + ": field 'format' is not \"" + kFormat + "\"");
  }
  if (const int v = field<int>(j, "version", where); v != kVersion) {
    throw std::runtime_error(where + ": unsupported version " + std::to_string(v));
  }
  ChatSession s;
  s.id = field<std::string>(j, "id", where);
  if (s.id.empty() || s.id.find_first_of("/\\.") != std::string::npos) {
    throw std::runtime_error(where + ": field 'id' is not a plain name: \"" + s.id + "\"");
  }
  s.name = field<std::string>(j, "name", where);
  s.created_unix_ms = field<int64_t>(j, "created_unix_ms", where);
  s.system_prompt = field<std::string>(j, "system_prompt", where);
  const nlohmann::json sampling = field<nlohmann::json>(j, "sampling", where);
  const std::string sw = where + ": sampling";
  s.sampling.temperature = field<float>(sampling, "temperature", sw);
  s.sampling.top_k = field<int32_t>(sampling, "top_k", sw);
  s.sampling.top_p = field<float>(sampling, "top_p", sw);
  s.sampling.min_p = field<float>(sampling, "min_p", sw);
  s.sampling.repeat_penalty = field<float>(sampling, "repeat_penalty", sw);
  s.sampling.repeat_last_n = field<int32_t>(sampling, "repeat_last_n", sw);
  s.sampling.seed = field<uint64_t>(sampling, "seed", sw);
  s.max_tokens = field<int32_t>(j, "max_tokens", where);
  const nlohmann::json messages = field<nlohmann::json>(j, "messages", where);
  if (!messages.is_array()) throw std::runtime_error(where + ": field 'messages' is not an array");
  for (size_t i = 0; i < messages.size(); ++i) {
    const std::string mw = where + ": messages[" + std::to_string(i) + "]";
    SessionMessage m;
    m.role = field<std::string>(messages[i], "role", mw);
    if (m.role != "user" && m.role != "assistant") throw std::runtime_error(mw + ": unknown role \"" + m.role + "\"");
    m.content = field<std::string>(messages[i], "content", mw);
    if (m.role == "assistant") m.stats = stats_from(field<nlohmann::json>(messages[i], "stats", mw), mw + ".stats");
    if (messages[i].contains("reasoning")) m.reasoning = field<std::string>(messages[i], "reasoning", mw);
    if (messages[i].contains("note")) m.note = field<std::string>(messages[i], "note", mw);
    // Optional: replies saved before the per-token view, or with nothing streamed, have none.
    if (messages[i].contains("tokens")) m.tokens = tokens_from(messages[i]["tokens"], mw + ": tokens");
    s.messages.push_back(std::move(m));
  }
  const nlohmann::json timeline = field<nlohmann::json>(j, "timeline", where);
  if (!timeline.is_array()) throw std::runtime_error(where + ": field 'timeline' is not an array");
  for (size_t i = 0; i < timeline.size(); ++i) {
    s.timeline.push_back(stats_from(timeline[i], where + ": timeline[" + std::to_string(i) + "]"));
  }
  return s;
}

ChatSession session_from_text(std::string_view text, const std::string& where) {
  return session_from_json(parse_json_text(text, where), where);
}

}  // namespace inferscope::gui
