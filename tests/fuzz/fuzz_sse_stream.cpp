// libFuzzer target for the server-sent events parser (core/remote/sse_stream.h). The input's first
// byte picks how the rest, a response body, is cut into pieces; fed whole and fed in those pieces it
// must give the same events, the same discarded tail and the same retry. The parser never throws.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/remote/sse_stream.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

using inferscope::SseEvent;
using inferscope::SseParser;

struct Parsed {
  std::vector<SseEvent> events;
  std::optional<std::string> discarded;
  std::optional<long long> retry_ms;
};

Parsed parse(const std::vector<std::string_view>& pieces) {
  SseParser parser({"error"});  // the extra field ChatStreamDecoder keeps
  Parsed out;
  for (const std::string_view piece : pieces) {
    for (SseEvent& e : parser.feed(piece)) out.events.push_back(std::move(e));
  }
  out.discarded = parser.finish();
  out.retry_ms = parser.retry_ms();
  return out;
}

bool same(const SseEvent& a, const SseEvent& b) {
  return std::tie(a.type, a.data, a.last_event_id, a.extra_fields) == std::tie(b.type, b.data, b.last_event_id, b.extra_fields);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view body = inferscope::fuzz::text_of(data + 1, size - 1);
  const Parsed whole = parse({body});
  const Parsed cut = parse(inferscope::fuzz::pieces(body, data[0]));
  const bool same_events = whole.events.size() == cut.events.size() &&
                           std::equal(whole.events.begin(), whole.events.end(), cut.events.begin(), same);
  if (!same_events || whole.discarded != cut.discarded || whole.retry_ms != cut.retry_ms) __builtin_trap();
  return 0;
}
