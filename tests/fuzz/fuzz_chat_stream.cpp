// libFuzzer target for the OpenAI-compatible completion stream decoder (core/remote/chat_stream.h):
// the input's first byte picks how the rest, a streamed response body, is cut into pieces. The
// decoder never throws: malformed JSON, mistyped fields and cut streams come back as ProtocolError
// events. The body is also decoded as one payload (a whole non-streamed response).
#include <cstdint>
#include <variant>

#include "core/remote/chat_stream.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

// Every problem is reported with a message saying what is wrong.
void check(const std::vector<inferscope::ChatEvent>& events) {
  for (const inferscope::ChatEvent& e : events) {
    if (const auto* error = std::get_if<inferscope::ProtocolError>(&e); error && error->message.empty()) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view body = inferscope::fuzz::text_of(data + 1, size - 1);
  inferscope::ChatStreamDecoder decoder;
  for (const std::string_view piece : inferscope::fuzz::pieces(body, data[0])) check(decoder.feed(piece));
  check(decoder.finish());
  check(inferscope::decode_completion_payload(body));
  return 0;
}
