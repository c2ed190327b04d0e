// llama-server's /slots read into each slot's context and use, on a body shaped as llama-server
// 0.3.36's vendored llama.cpp answers it (one idle slot, one decoding).
#include <gtest/gtest.h>

#include <string>

#include "core/remote/server_slots.h"

namespace inferscope {
namespace {

constexpr const char* kTwoSlots = R"([
  {"id": 0, "n_ctx": 512, "speculative": false, "is_processing": false},
  {"id": 1, "n_ctx": 512, "speculative": false, "is_processing": true, "id_task": 0, "n_prompt_tokens": 58,
   "n_prompt_tokens_processed": 4, "n_prompt_tokens_cache": 0,
   "next_token": [{"has_next_token": true, "has_new_line": true, "n_remain": 246, "n_decoded": 54}]}
])";

TEST(ServerSlots, ReadsEachSlotsContextAndUse) {
  const std::vector<ServerSlot> slots = read_slots(kTwoSlots);
  ASSERT_EQ(slots.size(), 2u);
  EXPECT_FALSE(slots[0].processing);
  EXPECT_FALSE(slots[0].tokens.has_value());
  EXPECT_EQ(slots[1].context, 512);
  EXPECT_EQ(slots[1].tokens, 4 + 54);  // computed prompt tokens + decoded (none cached)
  EXPECT_EQ(slots_summary(slots), "slot 0: idle (context 512) · slot 1: 58 of 512 tokens");
}

TEST(ServerSlots, MalformedBodiesAreNamed) {
  EXPECT_THROW(read_slots(R"({"error": "slots disabled"})"), std::runtime_error);
  try {
    read_slots(R"([{"n_ctx": 512}])");
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("without id or n_ctx"), std::string::npos) << e.what();
  }
}

// Found by fuzz_server_slots (tests/fuzz/regressions/fuzz_server_slots): nlohmann's type_error escaped
// for a non-boolean is_processing, and huge token counts overflowed their sum.
TEST(ServerSlots, MistypedOrOutOfRangeFieldsAreNamed) {
  const auto error_of = [](const char* body) {
    try {
      read_slots(body);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of(R"([{"id": 0, "n_ctx": 512, "is_processing": [1]}])").find("is_processing is not true or false"), std::string::npos);
  EXPECT_NE(error_of(R"([{"id": 0, "n_ctx": 512, "is_processing": true, "n_prompt_tokens_processed": 1,
                         "n_prompt_tokens_cache": 9223372036854775807}])").find("n_prompt_tokens_cache out of range"), std::string::npos);
  EXPECT_NE(error_of(R"([{"id": 0, "n_ctx": 512, "is_processing": true, "n_prompt_tokens_processed": 1,
                         "next_token": [{"n_decoded": -5}]}])").find("n_decoded out of range"), std::string::npos);
}

}  // namespace
}  // namespace inferscope
