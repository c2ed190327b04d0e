// libFuzzer target for llama-server's /slots body (core/remote/server_slots.h): read into slots and
// their panel summary, or std::runtime_error naming what is malformed.
#include <cstdint>
#include <stdexcept>

#include "core/remote/server_slots.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)inferscope::slots_summary(inferscope::read_slots(inferscope::fuzz::text_of(data, size)));
  } catch (const std::runtime_error&) {
  }
  return 0;
}
