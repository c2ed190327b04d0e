// The OpenAI answer writer and the SSE framing (core/server/openai_response.h, sse_writer.h): the
// shapes the official clients read, field by field.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/server/openai_response.h"
#include "core/server/sse_writer.h"

namespace inferscope {
namespace {

using nlohmann::json;

const AnswerHeader kChat{OpenAiRoute::ChatCompletions, "chatcmpl-1", 1700000000, "demo"};
const AnswerHeader kText{OpenAiRoute::Completions, "cmpl-1", 1700000000, "demo"};

TEST(OpenAiResponse, AWholeChatAnswer) {
  const std::vector<AnswerLogprob> logprobs = {{"Hi", -0.5, {{"Hi", -0.5}, {"Hello", -1.25}}}};
  const json j = answer_json(kChat, "Hi", StopReason::EndOfGeneration, 12, 1, &logprobs);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["id"], "chatcmpl-1");
  EXPECT_EQ(j["created"], 1700000000);
  EXPECT_EQ(j["model"], "demo");
  const json& choice = j["choices"][0];
  EXPECT_EQ(choice["index"], 0);
  EXPECT_EQ(choice["message"], (json{{"role", "assistant"}, {"content", "Hi"}}));
  EXPECT_EQ(choice["finish_reason"], "stop");
  const json& token = choice["logprobs"]["content"][0];
  EXPECT_EQ(token["token"], "Hi");
  EXPECT_EQ(token["logprob"], -0.5);
  EXPECT_EQ(token["bytes"], json::array({72, 105}));
  EXPECT_EQ(token["top_logprobs"][1]["token"], "Hello");
  EXPECT_EQ(j["usage"], (json{{"prompt_tokens", 12}, {"completion_tokens", 1}, {"total_tokens", 13}}));
  EXPECT_TRUE(answer_json(kChat, "x", StopReason::Length, 1, 1, nullptr)["choices"][0]["logprobs"].is_null());
}

TEST(OpenAiResponse, FinishReasons) {
  EXPECT_STREQ(openai_finish_reason(StopReason::Length), "length");
  EXPECT_STREQ(openai_finish_reason(StopReason::EndOfGeneration), "stop");
  EXPECT_STREQ(openai_finish_reason(StopReason::StopString), "stop");
}

TEST(OpenAiResponse, AWholeTextCompletionWithLegacyLogprobs) {
  const std::vector<AnswerLogprob> logprobs = {{" a", -0.1, {{" a", -0.1}}}, {"bc", -2.0, {{"bc", -2.0}}}};
  const json j = answer_json(kText, " abc", StopReason::Length, 3, 2, &logprobs);
  EXPECT_EQ(j["object"], "text_completion");
  const json& choice = j["choices"][0];
  EXPECT_EQ(choice["text"], " abc");
  EXPECT_EQ(choice["finish_reason"], "length");
  EXPECT_EQ(choice["logprobs"]["tokens"], json::array({" a", "bc"}));
  EXPECT_EQ(choice["logprobs"]["token_logprobs"], json::array({-0.1, -2.0}));
  EXPECT_EQ(choice["logprobs"]["top_logprobs"][1], (json{{"bc", -2.0}}));
  EXPECT_EQ(choice["logprobs"]["text_offset"], json::array({0, 2}));
}

TEST(OpenAiResponse, StreamChunksRoleDeltasFinishAndUsage) {
  const json role = chunk_json(kChat, std::string("assistant"), "", std::nullopt, nullptr, 0);
  EXPECT_EQ(role["object"], "chat.completion.chunk");
  EXPECT_EQ(role["choices"][0]["delta"], (json{{"role", "assistant"}}));
  EXPECT_TRUE(role["choices"][0]["finish_reason"].is_null());
  const json delta = chunk_json(kChat, std::nullopt, "Hel", std::nullopt, nullptr, 0);
  EXPECT_EQ(delta["choices"][0]["delta"], (json{{"content", "Hel"}}));
  const json finish = chunk_json(kChat, std::nullopt, "", StopReason::Length, nullptr, 3);
  EXPECT_EQ(finish["choices"][0]["delta"], json::object());
  EXPECT_EQ(finish["choices"][0]["finish_reason"], "length");
  const json usage = usage_chunk_json(kChat, 5, 3);
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["total_tokens"], 8);
  // A completion chunk's logprob offsets continue from what streamed before.
  const std::vector<AnswerLogprob> logprobs = {{"de", -1.0, {}}};
  const json text = chunk_json(kText, std::nullopt, "de", std::nullopt, &logprobs, 3);
  EXPECT_EQ(text["object"], "text_completion");
  EXPECT_EQ(text["choices"][0]["text"], "de");
  EXPECT_EQ(text["choices"][0]["logprobs"]["text_offset"], json::array({3}));
}

TEST(SseWriter, OneEventPerChunkAndDone) {
  const std::string event = sse_event(json{{"text", "two\n\nlines"}});
  EXPECT_EQ(event, "data: {\"text\":\"two\\n\\nlines\"}\n\n") << "newlines escaped: one event never splits";
  EXPECT_EQ(kSseDone, "data: [DONE]\n\n");
  // Bytes that are not UTF-8 (a token's half character) are replaced, not thrown on.
  EXPECT_EQ(sse_event(json{{"t", std::string("\xE2\x82")}}), "data: {\"t\":\"\xEF\xBF\xBD\"}\n\n");
}

}  // namespace
}  // namespace inferscope
