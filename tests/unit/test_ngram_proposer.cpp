// The n-gram proposer: which earlier place of the sequence it copies from, how far, and where it stops.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "core/spec/ngram_proposer.h"

namespace inferscope {
namespace {

using Ids = std::vector<TokenId>;

TEST(NgramProposer, CopiesWhatFollowedTheLongestSuffixLastTime) {
  const NgramProposer p(2, 4);
  // "1 2 3" recurs at the end: what followed it (4 5 6) is proposed, as far as the match vouches (3).
  EXPECT_EQ(p.lookup(Ids{1, 2, 3, 4, 5, 6, 7, 9, 1, 2, 3}, 8), (Ids{4, 5, 6}));
  // The longer suffix wins over a more recent shorter one: "8 2 3" matched 3 back, "2 3" only 2.
  EXPECT_EQ(p.lookup(Ids{8, 2, 3, 10, 11, 12, 2, 3, 20, 21, 8, 2, 3}, 8), (Ids{10, 11, 12}));
  // At most max_tokens, and nothing without a match of ngram_min tokens.
  EXPECT_EQ(p.lookup(Ids{1, 2, 3, 4, 5, 6, 7, 9, 1, 2, 3}, 2), (Ids{4, 5}));
  EXPECT_TRUE(p.lookup(Ids{1, 2, 3, 4, 5, 3}, 4).empty());
  EXPECT_TRUE(p.lookup(Ids{7}, 4).empty());
}

TEST(NgramProposer, TheSourceBeingCopiedBeatsAMoreRecentCoincidence) {
  const NgramProposer p(2, 8);
  // The source 30 31 32 33 "5 6" 40 41 42 43, a later coincidence "5 6" 50, and the copy so far
  // 30 31 32 33 5 6: both places match "5 6", but the source's match runs six tokens back.
  const Ids history{30, 31, 32, 33, 5, 6, 40, 41, 42, 43, 99, 5, 6, 50, 98, 30, 31, 32, 33, 5, 6};
  EXPECT_EQ(p.lookup(history, 4), (Ids{40, 41, 42, 43}));
  // Between equally long matches the most recent wins.
  EXPECT_EQ(p.lookup(Ids{9, 5, 6, 40, 9, 5, 6, 50, 9, 5, 6}, 1), (Ids{50}));
}

TEST(NgramProposer, NgramMaxIsTheLongestMatchCompared) {
  // The same history as above: compared over at most 2 tokens, both places match fully and the more
  // recent one wins; its draft is at most 2 tokens long.
  const Ids history{30, 31, 32, 33, 5, 6, 40, 41, 42, 43, 99, 5, 6, 50, 98, 30, 31, 32, 33, 5, 6};
  EXPECT_EQ(NgramProposer(2, 2).lookup(history, 4), (Ids{50, 98}));
  // Compared over 4, the source wins, with a draft of 4.
  EXPECT_EQ(NgramProposer(2, 4).lookup(history, 8), (Ids{40, 41, 42, 43}));
}

TEST(NgramProposer, ADraftIsNoLongerThanItsMatch) {
  const NgramProposer p(2, 4);
  // Only "5 6" matches: two tokens earn a two-token draft, however long the continuation.
  EXPECT_EQ(p.lookup(Ids{5, 6, 40, 41, 42, 43, 44, 99, 5, 6}, 8), (Ids{40, 41}));
}

TEST(NgramProposer, ADraftStopsAfterAnEndOfGeneration) {
  const NgramProposer p(2, 4, [](TokenId t) { return t == 2; });  // 2 ends generation here
  // Copying a quoted span: its end token is drafted (the model may well end there), nothing after.
  EXPECT_EQ(p.lookup(Ids{7, 10, 11, 12, 13, 2, 3, 4, 7, 10, 11}, 8), (Ids{12, 13, 2}));
}

TEST(NgramProposer, RefusesBadLengths) {
  EXPECT_THROW(NgramProposer(0, 4), std::invalid_argument);
  EXPECT_THROW(NgramProposer(3, 2), std::invalid_argument);
  EXPECT_THROW(NgramProposer(1, 17), std::invalid_argument);
}

}  // namespace
}  // namespace inferscope
