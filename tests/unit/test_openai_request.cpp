// The OpenAI request reader (core/server/openai_request.h): chat turns and prompts in every form the
// API allows, sampling fields, stops, streaming and logprobs; and every refusal a 400 naming the
// parameter, while fields it does not know pass as OpenAI lets them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/server/openai_request.h"

namespace inferscope {
namespace {

using nlohmann::json;

OpenAiRequest chat(const json& body) { return read_openai_request(OpenAiRoute::ChatCompletions, body.dump()); }
OpenAiRequest completion(const json& body) { return read_openai_request(OpenAiRoute::Completions, body.dump()); }

const json kTurn = json::array({{{"role", "user"}, {"content", "Hi"}}});

// The parameter a refused chat body names (the test fails if it is accepted).
std::string refused_param(OpenAiRoute route, const std::string& body) {
  try {
    read_openai_request(route, body);
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 400) << body;
    const json j = e.json();
    return j["error"]["param"].is_null() ? std::string("(none)") : j["error"]["param"].get<std::string>();
  }
  ADD_FAILURE() << "accepted: " << body;
  return {};
}

std::string chat_refusal(json body) {
  if (!body.contains("messages")) body["messages"] = kTurn;
  return refused_param(OpenAiRoute::ChatCompletions, body.dump());
}

TEST(OpenAiRequest, ChatTurnsAsTextOrTextParts) {
  const OpenAiRequest r = chat({{"messages", json::array({{{"role", "developer"}, {"content", "Be brief."}},
                                                          {{"role", "user"},
                                                           {"content", json::array({{{"type", "text"}, {"text", "Hello, "}},
                                                                                    {{"type", "text"}, {"text", "world"}}})}},
                                                          {{"role", "assistant"}, {"content", "Hi."}}})},
                                {"model", "anything"}});
  ASSERT_EQ(r.engine.messages.size(), 3u);
  EXPECT_EQ(r.engine.messages[0].role, "system") << "OpenAI's developer turn is the system turn";
  EXPECT_EQ(r.engine.messages[1].content, "Hello, world");
  EXPECT_EQ(r.engine.messages[2].role, "assistant");
  EXPECT_EQ(r.model, "anything");
  EXPECT_FALSE(r.stream);
  EXPECT_EQ(r.top_logprobs, -1);
  EXPECT_TRUE(r.engine.up_to_context) << "no limit: the reply may run to the end of the context";
}

TEST(OpenAiRequest, SamplingStopsAndLimitsReachTheEngineRequest) {
  const OpenAiRequest r = chat({{"messages", kTurn}, {"temperature", 0}, {"top_p", 0.5}, {"top_k", 40}, {"min_p", 0.05},
                                {"repeat_penalty", 1.1}, {"repeat_last_n", 32}, {"seed", 42}, {"stop", json::array({"\n\n", "END"})},
                                {"max_tokens", 100}, {"max_completion_tokens", 12}, {"frequency_penalty", 0},
                                {"n", 1}, {"user", "someone"}, {"metadata", {{"a", 1}}}});
  EXPECT_EQ(r.engine.sampling.temperature, 0.0f);
  EXPECT_EQ(r.engine.sampling.top_p, 0.5f);
  EXPECT_EQ(r.engine.sampling.top_k, 40);
  EXPECT_FLOAT_EQ(r.engine.sampling.min_p, 0.05f);
  EXPECT_FLOAT_EQ(r.engine.sampling.repeat_penalty, 1.1f);
  EXPECT_EQ(r.engine.sampling.repeat_last_n, 32);
  EXPECT_EQ(r.engine.sampling.seed, 42u);
  EXPECT_EQ(r.engine.stop, (std::vector<std::string>{"\n\n", "END"}));
  EXPECT_EQ(r.engine.max_tokens, 12) << "max_completion_tokens is the newer name and wins";
  EXPECT_EQ(chat({{"messages", kTurn}, {"stop", "###"}}).engine.stop, std::vector<std::string>{"###"});
  EXPECT_TRUE(completion({{"prompt", "x"}, {"ignore_eos", true}}).engine.sampling.ignore_eos) << "vLLM's extension";
  EXPECT_FALSE(completion({{"prompt", "x"}}).engine.sampling.ignore_eos);
  EXPECT_EQ(chat({{"messages", kTurn}}).engine.sampling.temperature, 1.0f) << "OpenAI's default";
  EXPECT_EQ(chat({{"messages", kTurn}, {"temperature", nullptr}}).engine.sampling.temperature, 1.0f) << "null is not given";
}

TEST(OpenAiRequest, StreamingUsageAndLogprobs) {
  const OpenAiRequest r = chat({{"messages", kTurn}, {"stream", true}, {"stream_options", {{"include_usage", true}}},
                                {"logprobs", true}, {"top_logprobs", 3}});
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_EQ(r.top_logprobs, 3);
  EXPECT_EQ(r.engine.logits, LogitsOutput::Sampled);
  EXPECT_FALSE(r.engine.speculate) << "one logits row per token, in order";
  EXPECT_EQ(chat({{"messages", kTurn}, {"logprobs", true}}).top_logprobs, 0);
  EXPECT_EQ(chat({{"messages", kTurn}, {"logprobs", false}}).top_logprobs, -1);
  EXPECT_EQ(completion({{"prompt", "x"}, {"logprobs", 5}}).top_logprobs, 5);
}

TEST(OpenAiRequest, PromptsAsTextTokenIdsOrAListOfOne) {
  EXPECT_EQ(completion({{"prompt", "Once upon"}}).engine.prompt, "Once upon");
  EXPECT_EQ(completion({{"prompt", {1, 2, 3}}}).engine.prompt_tokens, (std::vector<TokenId>{1, 2, 3}));
  EXPECT_EQ(completion({{"prompt", {"Once"}}}).engine.prompt, "Once");
  EXPECT_EQ(completion({{"prompt", json::array({json::array({7, 8})})}}).engine.prompt_tokens, (std::vector<TokenId>{7, 8}));
  EXPECT_TRUE(completion({{"prompt", "x"}}).engine.messages.empty());
}

TEST(OpenAiRequest, WhatTheEngineDoesNotDoIsRefusedByName) {
  EXPECT_EQ(chat_refusal({{"n", 2}}), "n");
  EXPECT_EQ(chat_refusal({{"tools", json::array({{{"type", "function"}}})}}), "tools");
  EXPECT_EQ(chat_refusal({{"tool_choice", "auto"}}), "tool_choice");
  EXPECT_EQ(chat_refusal({{"response_format", {{"type", "json_object"}}}}), "response_format");
  EXPECT_EQ(chat_refusal({{"frequency_penalty", 0.5}}), "frequency_penalty");
  EXPECT_EQ(chat_refusal({{"presence_penalty", -1}}), "presence_penalty");
  EXPECT_EQ(chat_refusal({{"logit_bias", {{"50256", -100}}}}), "logit_bias");
  EXPECT_EQ(refused_param(OpenAiRoute::Completions, R"({"prompt": "x", "best_of": 3})"), "best_of");
  EXPECT_EQ(refused_param(OpenAiRoute::Completions, R"({"prompt": "x", "echo": true})"), "echo");
  EXPECT_EQ(refused_param(OpenAiRoute::Completions, R"({"prompt": "x", "suffix": "end"})"), "suffix");
  // The harmless values pass.
  EXPECT_NO_THROW(chat({{"messages", kTurn}, {"tools", json::array()}, {"response_format", {{"type", "text"}}},
                        {"tool_choice", "none"}, {"logit_bias", json::object()}}));
}

TEST(OpenAiRequest, MalformedFieldsAreRefusedByName) {
  EXPECT_EQ(chat_refusal({{"temperature", "hot"}}), "temperature");
  EXPECT_EQ(chat_refusal({{"temperature", 2.5}}), "temperature");
  EXPECT_EQ(chat_refusal({{"top_p", 0}}), "top_p");
  EXPECT_EQ(chat_refusal({{"max_tokens", 0}}), "max_tokens");
  EXPECT_EQ(chat_refusal({{"max_tokens", 1.5}}), "max_tokens");
  EXPECT_EQ(chat_refusal({{"top_k", -1}}), "top_k");
  EXPECT_EQ(chat_refusal({{"seed", "x"}}), "seed");
  EXPECT_EQ(chat_refusal({{"stream", "yes"}}), "stream");
  EXPECT_EQ(chat_refusal({{"stream_options", {{"include_usage", true}}}}), "stream_options") << "without stream";
  EXPECT_EQ(chat_refusal({{"stop", json::array({1})}}), "stop");
  EXPECT_EQ(chat_refusal({{"top_logprobs", 21}, {"logprobs", true}}), "top_logprobs");
  EXPECT_EQ(chat_refusal({{"top_logprobs", 2}}), "top_logprobs") << "without logprobs";
  EXPECT_EQ(chat_refusal({{"model", 3}}), "model");
  EXPECT_EQ(chat_refusal({{"messages", json::array()}}), "messages");
  EXPECT_EQ(chat_refusal({{"messages", "Hi"}}), "messages");
  EXPECT_EQ(chat_refusal({{"messages", json::array({{{"role", "tool"}, {"content", "x"}}})}}), "messages[0].role");
  EXPECT_EQ(chat_refusal({{"messages", json::array({{{"role", "user"}}})}}), "messages[0].content");
  EXPECT_EQ(chat_refusal({{"messages", json::array({{{"role", "user"}, {"content", json::array({{{"type", "image_url"}}})}}})}}),
            "messages[0].content[0].type");
  EXPECT_EQ(refused_param(OpenAiRoute::ChatCompletions, "{}"), "messages");
  EXPECT_EQ(refused_param(OpenAiRoute::Completions, "{}"), "prompt");
  EXPECT_EQ(refused_param(OpenAiRoute::Completions, R"({"prompt": ["a", "b"]})"), "prompt") << "one prompt per request";
  EXPECT_EQ(refused_param(OpenAiRoute::Completions, R"({"prompt": [1, -2]})"), "prompt");
  EXPECT_EQ(refused_param(OpenAiRoute::Completions, R"({"prompt": []})"), "prompt");
  EXPECT_EQ(refused_param(OpenAiRoute::Completions, R"({"prompt": "x", "logprobs": true})"), "logprobs");
}

TEST(OpenAiRequest, ABodyThatIsNotAJsonObjectIsABadRequest) {
  // 1e999 overflows a double: nlohmann::json throws out_of_range, not parse_error (found by fuzz_openai_request).
  for (const char* body : {"{bad", "", "[1, 2]", "\"text\"", "null", "{\"max_tokens\": 1e999}"}) {
    EXPECT_EQ(refused_param(OpenAiRoute::ChatCompletions, body), "(none)") << body;
  }
  try {
    read_openai_request(OpenAiRoute::ChatCompletions, "{bad");
  } catch (const ApiError& e) {
    EXPECT_NE(std::string(e.what()).find("not valid JSON"), std::string::npos) << e.what();
    EXPECT_EQ(e.json()["error"]["type"], "invalid_request_error");
  }
}

// The label the timeline and the block view give a served request: the User-Agent's first product
// and the address, printable and short whatever the client sends.
TEST(OpenAiRequest, AClientIsLabelledByItsProductAndAddress) {
  EXPECT_EQ(client_label("curl/8.5.0", "127.0.0.1"), "curl/8.5.0 at 127.0.0.1");
  EXPECT_EQ(client_label("OpenAI/Python 1.51.0", "::1"), "OpenAI/Python at ::1");
  EXPECT_EQ(client_label("", "10.0.0.2"), "10.0.0.2");
  EXPECT_EQ(client_label("  ", "10.0.0.2"), "10.0.0.2");
  EXPECT_EQ(client_label("bad\x01\nagent/1", "h"), "bad??agent/1 at h");
  EXPECT_EQ(client_label(std::string(200, 'x'), "h"), std::string(kMaxClientProduct, 'x') + "\u2026 at h");
}

}  // namespace
}  // namespace inferscope
