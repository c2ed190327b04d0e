// ChatStreamDecoder on streams shaped like vLLM's and llama-server's OpenAI-compatible responses
// (written by hand from their documented chunk shapes), fed in every kind of split.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/remote/chat_stream.h"
#include "tests/support/chunkings.h"

namespace inferscope {
namespace {

using Events = std::vector<std::string>;

// One event as a short line: "content[0]:Hello", "usage:12/3", "error:MESSAGE|TYPE|CODE", ...
std::string describe(const ChatEvent& event) {
  struct Describer {
    std::string operator()(const ContentDelta& e) const { return "content[" + std::to_string(e.choice) + "]:" + e.text; }
    std::string operator()(const ReasoningDelta& e) const { return "reasoning[" + std::to_string(e.choice) + "]:" + e.text; }
    std::string operator()(const FinishReason& e) const { return "finish[" + std::to_string(e.choice) + "]:" + e.reason; }
    std::string operator()(const UsageReport& e) const {
      return "usage:" + std::to_string(e.prompt_tokens) + "/" + std::to_string(e.completion_tokens);
    }
    std::string operator()(const ServerTimings& e) const {
      auto opt = [](const std::optional<int64_t>& v) { return v ? std::to_string(*v) : std::string("-"); };
      return "timings:" + std::to_string(e.prompt_n) + "," + std::to_string(e.prompt_ms) + "," + std::to_string(e.predicted_n) +
             "," + std::to_string(e.predicted_ms) + "," + opt(e.draft_n) + "," + opt(e.draft_n_accepted);
    }
    std::string operator()(const ServerError& e) const { return "error:" + e.message + "|" + e.type + "|" + e.code; }
    std::string operator()(const ProtocolError& e) const { return "protocol:" + e.message; }
    std::string operator()(const StreamDone&) const { return "done"; }
  };
  return std::visit(Describer{}, event);
}

// Feeds the chunks, then ends the stream.
Events decode_chunks(const std::vector<std::string>& chunks) {
  ChatStreamDecoder decoder;
  Events out;
  for (const std::string& chunk : chunks) {
    for (const ChatEvent& e : decoder.feed(chunk)) out.push_back(describe(e));
  }
  for (const ChatEvent& e : decoder.finish()) out.push_back(describe(e));
  return out;
}

Events decode_whole(const std::string& body) { return decode_chunks({body}); }

Events decode_payload(const std::string& payload) {
  Events out;
  for (const ChatEvent& e : decode_completion_payload(payload)) out.push_back(describe(e));
  return out;
}

// vLLM /v1/chat/completions with "stream": true and stream_options.include_usage: a role-only first
// chunk with empty content, content chunks, a finish chunk, then a usage chunk with no choices.
const std::string kVllmChat =
    "data: {\"id\":\"chatcmpl-5f1e\",\"object\":\"chat.completion.chunk\",\"created\":1735000000,\"model\":\"Qwen/Qwen2.5-0.5B-Instruct\","
    "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"chatcmpl-5f1e\",\"object\":\"chat.completion.chunk\",\"created\":1735000000,\"model\":\"Qwen/Qwen2.5-0.5B-Instruct\","
    "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"chatcmpl-5f1e\",\"object\":\"chat.completion.chunk\",\"created\":1735000000,\"model\":\"Qwen/Qwen2.5-0.5B-Instruct\","
    "\"choices\":[{\"index\":0,\"delta\":{\"content\":\" w\\u00f6rld\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"chatcmpl-5f1e\",\"object\":\"chat.completion.chunk\",\"created\":1735000000,\"model\":\"Qwen/Qwen2.5-0.5B-Instruct\","
    "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\"},\"logprobs\":null,\"finish_reason\":\"stop\",\"stop_reason\":null}]}\n\n"
    "data: {\"id\":\"chatcmpl-5f1e\",\"object\":\"chat.completion.chunk\",\"created\":1735000000,\"model\":\"Qwen/Qwen2.5-0.5B-Instruct\","
    "\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"total_tokens\":15,\"completion_tokens\":3}}\n\n"
    "data: [DONE]\n\n";
const Events kVllmChatEvents{"content[0]:Hello", "content[0]: w\xC3\xB6rld", "finish[0]:stop", "usage:12/3", "done"};

// llama-server /v1/chat/completions: content null in the role chunk, reasoning_content from a
// thinking model, and usage with timings (speculative decoding on) in the last chunk.
const std::string kLlamaServerChat =
    "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null}}],"
    "\"created\":1735000100,\"id\":\"chatcmpl-Xy7\",\"model\":\"gpt-3.5-turbo\",\"system_fingerprint\":\"b5400-1a2b3c4\",\"object\":\"chat.completion.chunk\"}\r\n\r\n"
    "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"reasoning_content\":\"The user greets.\"}}],"
    "\"created\":1735000100,\"id\":\"chatcmpl-Xy7\",\"model\":\"gpt-3.5-turbo\",\"object\":\"chat.completion.chunk\"}\r\n\r\n"
    "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"content\":\"Hi\"}}],"
    "\"created\":1735000100,\"id\":\"chatcmpl-Xy7\",\"model\":\"gpt-3.5-turbo\",\"object\":\"chat.completion.chunk\"}\r\n\r\n"
    "data: {\"choices\":[{\"finish_reason\":\"stop\",\"index\":0,\"delta\":{}}],\"created\":1735000100,\"id\":\"chatcmpl-Xy7\","
    "\"model\":\"gpt-3.5-turbo\",\"object\":\"chat.completion.chunk\",\"usage\":{\"completion_tokens\":6,\"prompt_tokens\":9,\"total_tokens\":15},"
    "\"timings\":{\"prompt_n\":9,\"prompt_ms\":12.5,\"prompt_per_token_ms\":1.389,\"prompt_per_second\":720.0,\"predicted_n\":6,"
    "\"predicted_ms\":30.25,\"predicted_per_token_ms\":5.04,\"predicted_per_second\":198.3,\"draft_n\":8,\"draft_n_accepted\":5}}\r\n\r\n"
    "data: [DONE]\r\n\r\n";
const Events kLlamaServerChatEvents{"reasoning[0]:The user greets.", "content[0]:Hi", "finish[0]:stop", "usage:9/6",
                                    "timings:9,12.500000,6,30.250000,8,5", "done"};

TEST(ChatStream, VllmStreamInEveryChunking) {
  ASSERT_EQ(decode_whole(kVllmChat), kVllmChatEvents);
  for (const auto& chunks : chunkings(kVllmChat)) EXPECT_EQ(decode_chunks(chunks), kVllmChatEvents) << chunks.size() << " chunks";
}

TEST(ChatStream, LlamaServerStreamInEveryChunking) {
  ASSERT_EQ(decode_whole(kLlamaServerChat), kLlamaServerChatEvents);
  for (const auto& chunks : chunkings(kLlamaServerChat)) {
    EXPECT_EQ(decode_chunks(chunks), kLlamaServerChatEvents) << chunks.size() << " chunks";
  }
}

TEST(ChatStream, KeepAliveCommentsBetweenChunksChangeNothing) {
  const std::string with_pings = ": ping\n\n" + kVllmChat.substr(0, kVllmChat.find("data: [DONE]")) + ": ping - 2025-01-01\n\ndata: [DONE]\n\n";
  EXPECT_EQ(decode_whole(with_pings), kVllmChatEvents);
}

TEST(ChatStream, NullOrAbsentContentGivesNoEvent) {
  EXPECT_EQ(decode_payload(R"({"choices":[{"index":0,"delta":{"content":null}}]})"), Events{});
  EXPECT_EQ(decode_payload(R"({"choices":[{"index":0,"delta":{}}]})"), Events{});
  EXPECT_EQ(decode_payload(R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]})"), Events{});
}

TEST(ChatStream, ReasoningFieldOfNewerVllmIsReasoningToo) {
  EXPECT_EQ(decode_payload(R"({"choices":[{"index":0,"delta":{"reasoning":"hmm","content":null}}]})"), (Events{"reasoning[0]:hmm"}));
  // When a server sends both names for the same text, it counts once.
  EXPECT_EQ(decode_payload(R"({"choices":[{"index":0,"delta":{"reasoning_content":"a","reasoning":"a"}}]})"), (Events{"reasoning[0]:a"}));
}

TEST(ChatStream, UsageOnlyFinalChunk) {
  EXPECT_EQ(decode_payload(R"({"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":0,"total_tokens":100}})"),
            (Events{"usage:100/0"}));
}

TEST(ChatStream, TimingsWithoutDraftFields) {
  EXPECT_EQ(decode_payload(R"({"choices":[],"timings":{"prompt_n":3,"prompt_ms":1.5,"predicted_n":4,"predicted_ms":8}})"),
            (Events{"timings:3,1.500000,4,8.000000,-,-"}));
}

TEST(ChatStream, SeveralChoicesKeepTheirIndex) {
  EXPECT_EQ(decode_payload(R"({"choices":[{"index":1,"delta":{"content":"b"}},{"index":0,"delta":{"content":"a"},"finish_reason":"length"}]})"),
            (Events{"content[1]:b", "content[0]:a", "finish[0]:length"}));
}

TEST(ChatStream, MidStreamErrorFromVllmIsAServerError) {
  const std::string body =
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Par\"}}]}\n\n"
      "data: {\"error\": {\"object\": \"error\", \"message\": \"The decoder prompt is longer than the maximum model length\", "
      "\"type\": \"BadRequestError\", \"param\": null, \"code\": 400}}\n\n"
      "data: [DONE]\n\n";
  EXPECT_EQ(decode_whole(body),
            (Events{"content[0]:Par", "error:The decoder prompt is longer than the maximum model length|BadRequestError|400", "done"}));
}

TEST(ChatStream, OlderVllmTopLevelErrorObject) {
  EXPECT_EQ(decode_payload(R"({"object":"error","message":"out of memory","type":"InternalServerError","param":null,"code":500})"),
            (Events{"error:out of memory|InternalServerError|500"}));
}

TEST(ChatStream, LlamaServerErrorLineEndsTheStreamWithoutDone) {
  const std::string body =
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\n"
      "error: {\"code\":500,\"message\":\"context shift is disabled\",\"type\":\"server_error\"}\n\n";
  // No complaint about the missing [DONE]: the server already said what went wrong.
  EXPECT_EQ(decode_whole(body), (Events{"content[0]:x", "error:context shift is disabled|server_error|500"}));
}

TEST(ChatStream, ErrorThatIsPlainText) {
  EXPECT_EQ(decode_whole("error: upstream died\n\n"), (Events{"error:upstream died||"}));
  EXPECT_EQ(decode_payload(R"({"error":"rate limited"})"), (Events{"error:rate limited||"}));
}

TEST(ChatStream, MalformedJsonNamesThePayload) {
  EXPECT_EQ(decode_whole("data: {\"choices\":[{\"delta\":{\"content\":\"a\"\n\ndata: [DONE]\n\n"),
            (Events{"protocol:malformed JSON (cut short) in data payload: {\"choices\":[{\"delta\":{\"content\":\"a\"", "done"}));
  EXPECT_EQ(decode_payload(R"({"choices":[}]})"), (Events{R"(protocol:malformed JSON (at byte 13) in data payload: {"choices":[}]})"}));
}

// nlohmann's parser throws out_of_range, not parse_error, for a number beyond a double (found by
// fuzz_chat_stream: tests/fuzz/regressions/fuzz_chat_stream/number-beyond-double).
// A number an int cannot hold, cast regardless by nlohmann: undefined behaviour that fuzz_chat_stream's UBSan
// caught (tests/fuzz/regressions/fuzz_chat_stream/index-beyond-int).
TEST(ChatStream, IndexBeyondAnIntIsAProtocolError) {
  EXPECT_EQ(decode_payload(R"({"choices":[{"index":1e300}]})"),
            (Events{R"(protocol:choices[0]: field 'index' is missing or has the wrong type: 1e+300 in data payload: {"choices":[{"index":1e300}]})"}));
}

TEST(ChatStream, NumberBeyondADoubleIsAProtocolError) {
  EXPECT_EQ(decode_payload(R"({"usage":{"prompt_tokens":1e999}})"),
            (Events{R"(protocol:[json.exception.out_of_range.406] number overflow parsing '1e999' in data payload: {"usage":{"prompt_tokens":1e999}})"}));
  EXPECT_EQ(decode_whole("data: 10E1010\n\ndata: [DONE]\n\n"),
            (Events{"protocol:[json.exception.out_of_range.406] number overflow parsing '10E1010' in data payload: 10E1010", "done"}));
}

TEST(ChatStream, LongMalformedPayloadIsTruncatedInTheMessage) {
  const std::string payload = "{\"choices\":[{\"delta\":{\"content\":\"" + std::string(500, 'z') + "\"}";
  const Events events = decode_payload(payload);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0], "protocol:malformed JSON (cut short) in data payload: " + payload.substr(0, 120) + "... (" +
                           std::to_string(payload.size()) + " bytes)");
}

TEST(ChatStream, FieldOfTheWrongTypeIsNamed) {
  EXPECT_EQ(decode_payload(R"({"choices":[{"delta":{"content":5}}]})"),
            (Events{R"(protocol:choices[0].delta.content is not a string: 5 in data payload: {"choices":[{"delta":{"content":5}}]})"}));
  EXPECT_EQ(decode_payload(R"({"choices":{}})"), (Events{R"(protocol:choices is not an array in data payload: {"choices":{}})"}));
  EXPECT_EQ(decode_payload(R"({"usage":{"prompt_tokens":1}})"),
            (Events{R"(protocol:usage: field 'completion_tokens' is missing or has the wrong type in data payload: {"usage":{"prompt_tokens":1}})"}));
  EXPECT_EQ(decode_payload("[1,2]"), (Events{"protocol:payload is not a JSON object in data payload: [1,2]"}));
}

TEST(ChatStream, EventCutAtEndOfStreamIsReportedNotDecoded) {
  const std::string body = kVllmChat.substr(0, kVllmChat.find("data: [DONE]")) + "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lost\"}}]}\n";
  Events expected(kVllmChatEvents.begin(), kVllmChatEvents.end() - 1);
  expected.push_back("protocol:stream ended in the middle of an event, which was discarded: "
                     "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lost\"}}]}\n");
  EXPECT_EQ(decode_whole(body), expected);
}

TEST(ChatStream, StreamWithoutDoneIsReported) {
  EXPECT_EQ(decode_whole("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n"),
            (Events{"content[0]:a", "protocol:stream ended without data: [DONE]"}));
}

TEST(ChatStream, EventAfterDoneIsReported) {
  EXPECT_EQ(decode_whole("data: [DONE]\n\ndata: {\"choices\":[]}\n\n"), (Events{"done", "protocol:event after data: [DONE]: {\"choices\":[]}"}));
}

TEST(ChatStream, TextCompletionChunks) {
  // vLLM /v1/completions with "stream": true.
  const std::string body =
      "data: {\"id\":\"cmpl-9a\",\"object\":\"text_completion\",\"created\":1735000200,\"model\":\"m\","
      "\"choices\":[{\"index\":0,\"text\":\" Paris\",\"logprobs\":null,\"finish_reason\":null,\"stop_reason\":null}],\"usage\":null}\n\n"
      "data: {\"id\":\"cmpl-9a\",\"object\":\"text_completion\",\"created\":1735000200,\"model\":\"m\","
      "\"choices\":[{\"index\":0,\"text\":\".\",\"logprobs\":null,\"finish_reason\":\"length\",\"stop_reason\":null}],\"usage\":null}\n\n"
      "data: [DONE]\n\n";
  EXPECT_EQ(decode_whole(body), (Events{"content[0]: Paris", "content[0]:.", "finish[0]:length", "done"}));
}

TEST(ChatStream, NonStreamedResponseBodies) {
  EXPECT_EQ(decode_payload(R"({"id":"cmpl-1","object":"text_completion","choices":[{"index":0,"text":"The capital is Paris.","finish_reason":"stop"}],)"
                           R"("usage":{"prompt_tokens":5,"completion_tokens":6,"total_tokens":11}})"),
            (Events{"content[0]:The capital is Paris.", "finish[0]:stop", "usage:5/6"}));
  EXPECT_EQ(decode_payload(R"({"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","reasoning_content":"r","content":"c"},)"
                           R"("finish_reason":"stop"}]})"),
            (Events{"reasoning[0]:r", "content[0]:c", "finish[0]:stop"}));
}

}  // namespace
}  // namespace inferscope
