#include "core/engine/context_fit.h"

#include <algorithm>
#include <iterator>

#include "core/common/text_format.h"

namespace inferscope {
namespace {

// The messages from `first` that make up one turn: a user message and the replies up to the next one.
size_t turn_end(const std::vector<ChatMessage>& messages, size_t first) {
  size_t end = first + 1;
  while (end < messages.size() && messages[end].role != "user") ++end;
  return end;
}

struct PolicyText {
  std::string_view name, summary;
};

// Each policy's name and summary, in kContextPolicies' order.
constexpr PolicyText kPolicyTexts[] = {
    {"stop", "stop and say so"},
    {"drop-oldest", "drop the oldest messages, the system prompt first"},
    {"drop-middle", "keep the system prompt and the first exchange, drop the middle"},
};
static_assert(std::size(kPolicyTexts) == std::size(kContextPolicies));

const PolicyText& text_of(ContextPolicy policy) { return kPolicyTexts[static_cast<size_t>(policy)]; }

}  // namespace

std::string_view context_policy_name(ContextPolicy policy) { return text_of(policy).name; }

std::optional<ContextPolicy> parse_context_policy(std::string_view name) {
  for (ContextPolicy p : kContextPolicies)
    if (context_policy_name(p) == name) return p;
  return std::nullopt;
}

std::string_view context_policy_summary(ContextPolicy policy) { return text_of(policy).summary; }

int32_t reply_room(int32_t max_tokens, int32_t limit) {
  const int32_t half = std::max(1, limit / 2);
  return max_tokens > 0 ? std::min(max_tokens, half) : half;
}

ContextFit fit_context(const std::vector<ChatMessage>& messages, ContextPolicy policy, int32_t limit, int32_t room,
                       const ChatTokenCounter& count) {
  ContextFit fit;
  fit.messages = messages;
  fit.full_tokens = fit.prompt_tokens = count(messages);
  if (fit.prompt_tokens + room <= limit) return fit;
  if (policy == ContextPolicy::Stop || messages.size() < 2) {
    fit.fits = false;
    return fit;
  }
  // Where dropping starts: the first message (drop-oldest), or after the system prompt and the first exchange.
  size_t from = 0;
  if (policy == ContextPolicy::DropMiddle) {
    while (from < messages.size() && messages[from].role == "system") ++from;
    if (from < messages.size() && messages[from].role == "user") from = turn_end(messages, from);
  }
  const size_t last = messages.size() - 1;  // the new user turn, always sent
  std::vector<ChatMessage> kept(messages.begin(), messages.begin() + static_cast<std::ptrdiff_t>(std::min(from, last)));
  // Drop one whole turn at a time (system messages one by one) until the rest fits.
  size_t drop_end = std::min(from, last);
  for (;;) {
    if (drop_end >= last) {
      // Only the kept opening and the new turn are left: drop-middle gives up its first exchange too.
      if (policy == ContextPolicy::DropMiddle && !kept.empty() && kept.back().role != "system") {
        while (!kept.empty() && kept.back().role != "system") kept.pop_back();
        std::vector<ChatMessage> candidate = kept;
        candidate.push_back(messages[last]);
        fit.messages = candidate;
        fit.prompt_tokens = count(candidate);
        fit.dropped = static_cast<int32_t>(messages.size() - candidate.size());
        fit.fits = fit.prompt_tokens + room <= limit;
      } else {
        fit.fits = false;
      }
      return fit;
    }
    drop_end = messages[drop_end].role == "user" ? turn_end(messages, drop_end) : drop_end + 1;
    std::vector<ChatMessage> candidate = kept;
    candidate.insert(candidate.end(), messages.begin() + static_cast<std::ptrdiff_t>(std::min(drop_end, last)), messages.end());
    const int32_t tokens = count(candidate);
    if (tokens + room <= limit) {
      fit.messages = std::move(candidate);
      fit.prompt_tokens = tokens;
      fit.dropped = static_cast<int32_t>(messages.size() - fit.messages.size());
      return fit;
    }
  }
}

std::string context_fit_note(const ContextFit& fit, ContextPolicy policy, int32_t limit) {
  const std::string context = "the " + format_thousands(limit) + "-token context";
  if (!fit.fits) {
    std::string note = "The conversation (" + format_thousands(fit.full_tokens) + " tokens) leaves no room for a reply in " +
                       context + ". ";
    return note + (policy == ContextPolicy::Stop
                       ? "Start a new session, or choose a context policy that drops old turns."
                       : "Even the new message alone is too long: shorten it, or start a new session.");
  }
  if (fit.dropped == 0) return {};
  return "Left out " + std::to_string(fit.dropped) + (fit.dropped == 1 ? " message (" : " messages (") +
         format_thousands(fit.full_tokens - fit.prompt_tokens) + " tokens) to fit " + context + " with room for the reply (" +
         std::string(context_policy_summary(policy)) + ").";
}

}  // namespace inferscope
