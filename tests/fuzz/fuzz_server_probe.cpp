// libFuzzer target for the bodies server detection reads (core/remote/server_probe.h): the input as
// llama-server's /props (read or refused, never a throw) and as /v1/models (std::runtime_error naming
// what is malformed).
#include <cstdint>
#include <stdexcept>

#include "core/remote/server_probe.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body = inferscope::fuzz::text_of(data, size);
  inferscope::ServerInfo info;
  (void)inferscope::read_llama_props(body, info);
  try {
    info = inferscope::read_models_list(body);
    (void)inferscope::read_llama_props(body, info);
  } catch (const std::runtime_error&) {
  }
  return 0;
}
