// What a chat sends when its conversation no longer fits the context: a policy, as chat apps offer.
// Stop refuses the turn; drop-oldest leaves out the oldest messages, the system prompt first; drop-middle
// keeps the system prompt and the first exchange (they usually set the task) and leaves out the turns
// after them, oldest first. Both drop whole turns (a user message with its reply) and never the new
// user message, so roles still alternate.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/tokenizer/chat_template.h"

namespace inferscope {

enum class ContextPolicy { Stop, DropOldest, DropMiddle };
inline constexpr ContextPolicy kContextPolicies[] = {ContextPolicy::Stop, ContextPolicy::DropOldest, ContextPolicy::DropMiddle};

// "stop", "drop-oldest", "drop-middle".
std::string_view context_policy_name(ContextPolicy policy);
std::optional<ContextPolicy> parse_context_policy(std::string_view name);
// What the policy does, in a few words: "keep the system prompt and the first exchange, drop the middle".
std::string_view context_policy_summary(ContextPolicy policy);

struct ContextFit {
  std::vector<ChatMessage> messages;  // what to send
  int32_t dropped = 0;                // messages left out
  int32_t full_tokens = 0;            // the whole conversation rendered
  int32_t prompt_tokens = 0;          // `messages` rendered
  bool fits = true;                   // false: the policy stops here, or nothing it may drop makes room
};

// Counts the tokens of messages rendered with the model's chat template.
using ChatTokenCounter = std::function<int32_t(const std::vector<ChatMessage>&)>;

// The messages to send so the rendered prompt leaves `room` tokens of the `limit` for the reply.
// The last message is the new user turn.
ContextFit fit_context(const std::vector<ChatMessage>& messages, ContextPolicy policy, int32_t limit, int32_t room,
                       const ChatTokenCounter& count);

// The room to leave for a reply of at most `max_tokens` (<= 0: no limit) in a context of `limit`:
// all of it, up to half the context.
int32_t reply_room(int32_t max_tokens, int32_t limit);

// "Left out the 4 oldest messages (1,210 tokens) to fit the 2,048-token context (policy: …)." or, when
// it does not fit, what to do about it.
std::string context_fit_note(const ContextFit& fit, ContextPolicy policy, int32_t limit);

}  // namespace inferscope
