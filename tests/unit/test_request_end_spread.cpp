// Tokens counted when their request ends are drawn over the time the request took, and every token is
// drawn once.
#include <gtest/gtest.h>

#include "core/remote/request_end_spread.h"

namespace inferscope {
namespace {

TEST(RequestEndSpread, ARequestsTokensAreDrawnOverItsDuration) {
  RequestEndSpread spread;
  spread.add(100, 10);  // 100 tokens generated over 10 s, seen at one scrape
  EXPECT_DOUBLE_EQ(spread.take(5), 50);
  EXPECT_DOUBLE_EQ(spread.pending(), 50);
  EXPECT_DOUBLE_EQ(spread.take(5), 50);
  EXPECT_DOUBLE_EQ(spread.take(5), 0);
  EXPECT_DOUBLE_EQ(spread.pending(), 0);
}

TEST(RequestEndSpread, AShortRequestIsDrawnInTheIntervalThatSawItEnd) {
  RequestEndSpread spread;
  spread.add(40, 0.6);
  EXPECT_DOUBLE_EQ(spread.take(5), 40);
  spread.add(7, 0);  // the server gave no duration: all at once
  EXPECT_DOUBLE_EQ(spread.take(5), 7);
}

TEST(RequestEndSpread, OverlappingBatchesAddUpAndKeepTheirTotals) {
  RequestEndSpread spread;
  spread.add(90, 9);   // 10 tok/s for 9 s
  double drawn = spread.take(3);  // 30
  spread.add(60, 3);   // 20 tok/s for 3 s
  drawn += spread.take(3);  // 30 + 60
  EXPECT_DOUBLE_EQ(drawn, 120);
  drawn += spread.take(3);  // the first batch's last 30
  EXPECT_DOUBLE_EQ(drawn, 150);
  EXPECT_DOUBLE_EQ(spread.pending(), 0);
  spread.add(0, 1);
  spread.add(-5, 1);  // nothing counted: nothing drawn
  EXPECT_DOUBLE_EQ(spread.take(1), 0);
}

}  // namespace
}  // namespace inferscope
