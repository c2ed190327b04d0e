#include "core/remote/server_slots.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/remote/text_excerpt.h"

namespace inferscope {
namespace {

using nlohmann::json;

int64_t integer(const json& slot, const char* key, int64_t fallback) {
  const auto it = slot.find(key);
  return it != slot.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}

// A token count of a slot: a whole number from 0 to 2^40 (far beyond any context), else the error names it.
int64_t token_count(const json& slot, const char* key) {
  const int64_t n = integer(slot, key, 0);
  if (n < 0 || n > (int64_t{1} << 40)) throw std::runtime_error("/slots: " + std::string(key) + " out of range: " + text_excerpt(slot.dump()));
  return n;
}

}  // namespace

std::vector<ServerSlot> read_slots(std::string_view body) {
  const json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array()) throw std::runtime_error("/slots: expected a JSON array, got " + text_excerpt(body));
  std::vector<ServerSlot> slots;
  for (const json& s : j) {
    if (!s.is_object() || !s.contains("id") || !s.contains("n_ctx")) {
      throw std::runtime_error("/slots: a slot without id or n_ctx: " + text_excerpt(s.dump()));
    }
    ServerSlot slot;
    slot.id = integer(s, "id", -1);
    slot.context = integer(s, "n_ctx", 0);
    const auto processing = s.find("is_processing");
    if (processing != s.end() && !processing->is_boolean()) {
      throw std::runtime_error("/slots: is_processing is not true or false: " + text_excerpt(s.dump()));
    }
    slot.processing = processing != s.end() && processing->get<bool>();
    if (slot.processing && s.contains("n_prompt_tokens_processed")) {
      // The prompt tokens found in the slot's cache and those computed, then the tokens decoded.
      int64_t decoded = 0;
      if (const auto next = s.find("next_token"); next != s.end() && next->is_array() && !next->empty()) {
        decoded = token_count(next->front(), "n_decoded");
      }
      slot.tokens = token_count(s, "n_prompt_tokens_cache") + token_count(s, "n_prompt_tokens_processed") + decoded;
    }
    slots.push_back(slot);
  }
  return slots;
}

std::string slots_summary(const std::vector<ServerSlot>& slots) {
  std::string out;
  for (const ServerSlot& s : slots) {
    if (!out.empty()) out += " · ";
    out += "slot " + std::to_string(s.id) + ": ";
    out += s.tokens ? std::to_string(*s.tokens) + " of " + std::to_string(s.context) + " tokens"
                    : (s.processing ? "busy" : "idle") + std::string(" (context ") + std::to_string(s.context) + ")";
  }
  return out;
}

}  // namespace inferscope
