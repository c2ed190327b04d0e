// What a server measured of one request itself (llama-server's `timings` object): a remote stream
// reports it, and the engine hands it on (EngineCallbacks::on_server_timings).
#pragma once
#include <cstdint>
#include <optional>

namespace inferscope {

struct ServerTimings {
  int64_t prompt_n = 0;
  double prompt_ms = 0;
  int64_t predicted_n = 0;
  double predicted_ms = 0;
  std::optional<int64_t> draft_n;           // with speculative decoding only
  std::optional<int64_t> draft_n_accepted;
};

}  // namespace inferscope
