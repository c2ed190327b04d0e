// llama-server's /slots: each slot's context and how much of it its current request fills.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace inferscope {

struct ServerSlot {
  int64_t id = 0;
  int64_t context = 0;            // n_ctx: the slot's context length
  bool processing = false;
  std::optional<int64_t> tokens;  // while processing: prompt tokens (cached + computed) + tokens decoded
};

// Parses a /slots body (a JSON array); throws std::runtime_error naming what is malformed.
std::vector<ServerSlot> read_slots(std::string_view body);

// "slot 0: idle (context 512) · slot 1: 58 of 512 tokens" for a panel.
std::string slots_summary(const std::vector<ServerSlot>& slots);

}  // namespace inferscope
