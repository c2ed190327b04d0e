// Stop strings on streamed text: partial matches are held back, text after a stop is dropped.
#include <gtest/gtest.h>

#include "core/engine/stop_strings.h"

namespace inferscope {
namespace {

TEST(EngineStopStrings, HoldsBackAPossibleStopAndCutsBeforeIt) {
  StopMatcher m({"<end>", "\n\n"});
  EXPECT_EQ(m.push("Hello <e"), "Hello ");
  EXPECT_EQ(m.push("n"), "");
  EXPECT_EQ(m.push("d> more"), "");
  EXPECT_TRUE(m.stopped());
  EXPECT_EQ(m.push("later"), "");
  EXPECT_EQ(m.flush(), "");
}

TEST(EngineStopStrings, ReleasesHeldTextWhenItStopsMatching) {
  StopMatcher m({"<end>"});
  EXPECT_EQ(m.push("a <en"), "a ");
  EXPECT_EQ(m.push("x"), "<enx");
  EXPECT_EQ(m.push("<"), "");
  EXPECT_EQ(m.flush(), "<");
  EXPECT_FALSE(m.stopped());
}

TEST(EngineStopStrings, EarliestStopWinsAndEmptyStopsAreIgnored) {
  StopMatcher m({"", "cd", "b"});
  EXPECT_EQ(m.push("abcd"), "a");
  StopMatcher none({});
  EXPECT_EQ(none.push("text"), "text");
}

}  // namespace
}  // namespace inferscope
