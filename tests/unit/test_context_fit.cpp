// The chat's context policies on a conversation too long for its context: stop refuses, drop-oldest
// leaves out the oldest messages (the system prompt first), drop-middle keeps the system prompt and
// the first exchange; both drop whole turns, never the new message, and say what they left out.
#include <gtest/gtest.h>

#include "core/common/text_format.h"
#include "core/engine/context_fit.h"

namespace inferscope {
namespace {

// A stand-in tokenizer: each message costs its characters plus 2 tokens of template.
int32_t count(const std::vector<ChatMessage>& messages) {
  int32_t n = 0;
  for (const ChatMessage& m : messages) n += static_cast<int32_t>(m.content.size()) + 2;
  return n;
}

// system (10+2), then turns of 20+2 per message, and the new user message (8+2): 12 + 4*44 + 10 = 198.
std::vector<ChatMessage> conversation() {
  std::vector<ChatMessage> m{{"system", std::string(10, 's')}};
  for (char c : {'a', 'b', 'c', 'd'}) {
    m.push_back({"user", std::string(20, c)});
    m.push_back({"assistant", std::string(20, static_cast<char>(c - 'a' + 'A'))});
  }
  m.push_back({"user", "new turn"});
  return m;
}

std::string firsts(const std::vector<ChatMessage>& messages) {
  std::string s;
  for (const ChatMessage& m : messages) s += m.content[0];
  return s;
}

TEST(ContextFit, AConversationThatFitsIsSentWhole) {
  const ContextFit fit = fit_context(conversation(), ContextPolicy::Stop, 300, 100, count);
  EXPECT_TRUE(fit.fits);
  EXPECT_EQ(fit.dropped, 0);
  EXPECT_EQ(fit.prompt_tokens, 198);
  EXPECT_EQ(fit.messages.size(), 10u);
  EXPECT_EQ(context_fit_note(fit, ContextPolicy::Stop, 300), "");
}

TEST(ContextFit, StopRefusesAndSaysWhatToDo) {
  const ContextFit fit = fit_context(conversation(), ContextPolicy::Stop, 250, 100, count);
  EXPECT_FALSE(fit.fits);
  EXPECT_EQ(context_fit_note(fit, ContextPolicy::Stop, 250),
            "The conversation (198 tokens) leaves no room for a reply in the 250-token context. Start a new session, or "
            "choose a context policy that drops old turns.");
}

TEST(ContextFit, DropOldestLeavesOutTheSystemPromptThenWholeTurns) {
  // 100 tokens of prompt at most: the system prompt and a's and b's turns go, 100 tokens in all.
  ContextFit fit = fit_context(conversation(), ContextPolicy::DropOldest, 200, 100, count);
  ASSERT_TRUE(fit.fits);
  EXPECT_EQ(firsts(fit.messages), "cCdDn");
  EXPECT_EQ(fit.dropped, 5);
  EXPECT_EQ(fit.prompt_tokens, 98);
  EXPECT_EQ(context_fit_note(fit, ContextPolicy::DropOldest, 200),
            "Left out 5 messages (100 tokens) to fit the 200-token context with room for the reply (drop the oldest "
            "messages, the system prompt first).");
  // Room for all but the system prompt: only it goes.
  fit = fit_context(conversation(), ContextPolicy::DropOldest, 287, 100, count);
  EXPECT_EQ(firsts(fit.messages), "aAbBcCdDn");
  EXPECT_EQ(fit.dropped, 1);
}

TEST(ContextFit, DropMiddleKeepsTheSystemPromptAndTheFirstExchange) {
  const ContextFit fit = fit_context(conversation(), ContextPolicy::DropMiddle, 240, 100, count);
  ASSERT_TRUE(fit.fits);
  EXPECT_EQ(firsts(fit.messages), "saAdDn");  // b's and c's turns left out
  EXPECT_EQ(fit.dropped, 4);
  EXPECT_EQ(fit.prompt_tokens, 110);
  // With less room the first exchange goes too, the system prompt stays.
  const ContextFit tight = fit_context(conversation(), ContextPolicy::DropMiddle, 125, 100, count);
  ASSERT_TRUE(tight.fits);
  EXPECT_EQ(firsts(tight.messages), "sn");
}

TEST(ContextFit, ANewMessageTooLongForAnyPolicyIsRefused) {
  std::vector<ChatMessage> m = conversation();
  m.back().content = std::string(500, 'x');
  for (ContextPolicy policy : kContextPolicies) {
    const ContextFit fit = fit_context(m, policy, 300, 100, count);
    EXPECT_FALSE(fit.fits) << context_policy_name(policy);
    if (policy != ContextPolicy::Stop) {
      EXPECT_NE(context_fit_note(fit, policy, 300).find("Even the new message alone is too long"), std::string::npos);
    }
  }
}

TEST(ContextFit, PoliciesHaveNamesAndTheReplyItsRoom) {
  for (ContextPolicy policy : kContextPolicies) EXPECT_EQ(parse_context_policy(context_policy_name(policy)), policy);
  EXPECT_EQ(parse_context_policy("rolling"), std::nullopt);
  EXPECT_EQ(reply_room(256, 2048), 256);
  EXPECT_EQ(reply_room(4000, 2048), 1024) << "at most half the context";
  EXPECT_EQ(reply_room(-1, 2048), 1024);
  // Notes group thousands.
  EXPECT_EQ(format_thousands(2048), "2,048");
  EXPECT_EQ(format_thousands(-1234567), "-1,234,567");
  EXPECT_EQ(format_thousands(999), "999");
  EXPECT_EQ(format_thousands(0), "0");
}

}  // namespace
}  // namespace inferscope
