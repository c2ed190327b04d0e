// The engine's callbacks sorted by request for the HTTP threads (core/server/request_streams.h): what a
// request's queue holds while its client has not read it, and what is dropped once the client leaves.
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "core/sample/logprobs.h"
#include "core/server/openai_request.h"
#include "core/server/request_streams.h"

namespace inferscope {
namespace {

constexpr std::chrono::milliseconds kNoWait{0};

// A vocabulary-sized row of distinct logits.
std::vector<float> row_of(int32_t vocab) {
  std::vector<float> row(static_cast<size_t>(vocab));
  for (int32_t i = 0; i < vocab; ++i) row[static_cast<size_t>(i)] = static_cast<float>((i * 7919) % vocab) / 1000.0f;
  return row;
}

// A client that reads nothing while a request asks for logits: each queued token keeps its
// log-probability and the 20 most likely tokens, never the vocabulary-sized row.
TEST(RequestStreams, AQueuedTokenKeepsItsLogprobsNotTheRow) {
  RequestStreams streams;
  const EngineCallbacks cb = streams.callbacks();
  const std::vector<float> row = row_of(49152);
  for (int32_t i = 0; i < 3; ++i) {
    cb.on_logits(7, i, row);
    cb.on_token(7, "x", 100 + i, TokenTiming{});
  }
  const StreamEvents events = streams.take(7, kNoWait);
  ASSERT_EQ(events.tokens.size(), 3u);
  const std::vector<TokenLogprob> top = top_logprobs(row, kMaxTopLogprobs);
  for (int32_t i = 0; i < 3; ++i) {
    const StreamedToken& t = events.tokens[static_cast<size_t>(i)];
    ASSERT_TRUE(t.logprob.has_value());
    EXPECT_DOUBLE_EQ(*t.logprob, log_probability(row, 100 + i));
    ASSERT_EQ(t.top.size(), top.size());
    for (size_t k = 0; k < top.size(); ++k) {
      EXPECT_EQ(t.top[k].id, top[k].id);
      EXPECT_DOUBLE_EQ(t.top[k].logprob, top[k].logprob);
    }
  }
}

TEST(RequestStreams, ATokenWithoutLogitsHasNoLogprobs) {
  RequestStreams streams;
  const EngineCallbacks cb = streams.callbacks();
  cb.on_token(1, "a", 5, TokenTiming{});
  cb.on_token(1, "b", -1, TokenTiming{});
  cb.on_finished(1, StopReason::Length);
  const StreamEvents events = streams.take(1, kNoWait);
  ASSERT_EQ(events.tokens.size(), 2u);
  EXPECT_FALSE(events.tokens[0].logprob.has_value());
  EXPECT_TRUE(events.tokens[0].top.empty());
  EXPECT_EQ(events.finished, StopReason::Length);
}

// A row whose token never came (held-back text, token -1) is not given to the next token.
TEST(RequestStreams, ARowGoesOnlyToTheTokenItChose) {
  RequestStreams streams;
  const EngineCallbacks cb = streams.callbacks();
  cb.on_logits(2, 0, row_of(64));
  cb.on_token(2, "", -1, TokenTiming{});
  cb.on_token(2, "b", 3, TokenTiming{});
  const StreamEvents events = streams.take(2, kNoWait);
  ASSERT_EQ(events.tokens.size(), 2u);
  EXPECT_FALSE(events.tokens[0].logprob.has_value());
  EXPECT_FALSE(events.tokens[1].logprob.has_value());
}

// A dropped request's later events are discarded, and its end forgets it.
TEST(RequestStreams, ADroppedRequestQueuesNothing) {
  RequestStreams streams;
  const EngineCallbacks cb = streams.callbacks();
  cb.on_token(4, "a", 1, TokenTiming{});
  streams.drop(4);
  cb.on_logits(4, 1, row_of(64));
  cb.on_token(4, "b", 2, TokenTiming{});
  cb.on_finished(4, StopReason::Aborted);
  const StreamEvents events = streams.take(4, kNoWait);
  EXPECT_TRUE(events.tokens.empty());
  EXPECT_FALSE(events.finished.has_value());
}

}  // namespace
}  // namespace inferscope
