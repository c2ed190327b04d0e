// libFuzzer target for the workbench's saved chat sessions (gui/chat/chat_session.h, plain C++ and
// nlohmann::json, no Qt): the input as a session file's text is read or refused with
// std::runtime_error naming the field. A session read is saved and read again: the second save
// must equal the first (what the workbench writes, it reads back).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "gui/chat/chat_session.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace inferscope::gui;
  ChatSession session;
  try {
    session = session_from_text(inferscope::fuzz::text_of(data, size), "fuzz.json");
  } catch (const std::runtime_error&) {
    return 0;
  }
  const nlohmann::json saved = session_to_json(session);
  if (session_to_json(session_from_text(saved.dump(2), "saved.json")) != saved) __builtin_trap();
  return 0;
}
