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
    slot.processing = s.value("is_processing", false);
    if (slot.processing && s.contains("n_prompt_tokens_processed")) {
      // The prompt tokens found in the slot's cache and those computed, then the tokens decoded.
      int64_t decoded = 0;
      if (const auto next = s.find("next_token"); next != s.end() && next->is_array() && !next->empty()) {
        decoded = integer(next->front(), "n_decoded", 0);
      }
      slot.tokens = integer(s, "n_prompt_tokens_cache", 0) + integer(s, "n_prompt_tokens_processed", 0) + decoded;
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
