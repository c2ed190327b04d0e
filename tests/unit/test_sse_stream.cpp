// SseParser against the WHATWG event-stream interpretation rules, fed in every kind of split.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/remote/sse_stream.h"
#include "tests/support/chunkings.h"

namespace inferscope {
namespace {

// An event as "TYPE|DATA|ID" with its extra fields appended as "|NAME=VALUE".
std::string describe(const SseEvent& e) {
  std::string out = e.type + "|" + e.data + "|" + e.last_event_id;
  for (const auto& [name, value] : e.extra_fields) out += "|" + name + "=" + value;
  return out;
}

std::vector<std::string> parse_chunks(const std::vector<std::string>& chunks, std::vector<std::string> extra = {}) {
  SseParser parser(std::move(extra));
  std::vector<std::string> out;
  for (const std::string& chunk : chunks) {
    for (const SseEvent& e : parser.feed(chunk)) out.push_back(describe(e));
  }
  return out;
}

std::vector<std::string> parse_whole(const std::string& text) { return parse_chunks({text}); }

using Events = std::vector<std::string>;

TEST(SseStream, DataLineIsDispatchedOnBlankLine) {
  EXPECT_EQ(parse_whole("data: hello\n\n"), (Events{"message|hello|"}));
  EXPECT_EQ(parse_whole("data: hello\n"), Events{}) << "no blank line yet";
}

TEST(SseStream, MultiLineDataIsJoinedWithNewline) {
  EXPECT_EQ(parse_whole("data: one\ndata: two\ndata:\ndata: four\n\n"), (Events{"message|one\ntwo\n\nfour|"}));
}

TEST(SseStream, OnlyOneSpaceAfterTheColonIsRemoved) {
  EXPECT_EQ(parse_whole("data:x\n\ndata:  x\n\n"), (Events{"message|x|", "message| x|"}));
}

TEST(SseStream, LineWithoutColonIsAFieldWithEmptyValue) {
  EXPECT_EQ(parse_whole("data\n\n"), (Events{"message||"}));
}

TEST(SseStream, CommentsAndKeepAlivesAreIgnored) {
  EXPECT_EQ(parse_whole(": ping\n\n:\n\ndata: a\n: between\ndata: b\n\n"), (Events{"message|a\nb|"}));
}

TEST(SseStream, EventTypeAppliesToOneEventOnly) {
  EXPECT_EQ(parse_whole("event: update\ndata: 1\n\ndata: 2\n\n"), (Events{"update|1|", "message|2|"}));
}

TEST(SseStream, EventWithoutDataIsNotDispatchedAndItsTypeIsForgotten) {
  EXPECT_EQ(parse_whole("event: lonely\n\ndata: x\n\n"), (Events{"message|x|"}));
}

TEST(SseStream, LastEventIdPersistsAndIgnoresValuesWithNul) {
  const std::string stream = std::string("id: 7\ndata: a\n\ndata: b\n\nid: 8\0x\ndata: c\n\nid\ndata: d\n\n", 53);
  EXPECT_EQ(parse_whole(stream), (Events{"message|a|7", "message|b|7", "message|c|7", "message|d|"}));
}

TEST(SseStream, UnknownFieldsAreIgnoredUnlessAskedFor) {
  const std::string stream = "error: {\"message\":\"boom\"}\n\nfoo: bar\ndata: x\n\n";
  EXPECT_EQ(parse_whole(stream), (Events{"message|x|"}));
  EXPECT_EQ(parse_chunks({stream}, {"error"}), (Events{"message|||error={\"message\":\"boom\"}", "message|x|"}));
}

TEST(SseStream, RetryTakesDigitsOnly) {
  SseParser parser;
  parser.feed("retry: 1500\n\n");
  EXPECT_EQ(parser.retry_ms(), 1500);
  parser.feed("retry: 12a\n\nretry: -3\n\nretry: 99999999999999999999999\n\n");
  EXPECT_EQ(parser.retry_ms(), 1500);
}

TEST(SseStream, AllThreeLineEndingsAndMixtures) {
  const Events expected{"message|a\nb|", "message|c|"};
  EXPECT_EQ(parse_whole("data: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n"), expected);
  EXPECT_EQ(parse_whole("data: a\rdata: b\r\rdata: c\r\r"), expected);
  EXPECT_EQ(parse_whole("data: a\ndata: b\r\rdata: c\r\n\n"), expected);
}

TEST(SseStream, CrAtTheEndOfOneReadAndLfAtTheStartOfTheNextAreOneLineEnding) {
  // Were the LF taken as a second line ending, "a" would be dispatched alone.
  EXPECT_EQ(parse_chunks({"data: a\r", "\ndata: b\r", "\n\r", "\n"}), (Events{"message|a\nb|"}));
}

TEST(SseStream, ByteOrderMarkAtTheStartIsSkippedEvenWhenSplit) {
  EXPECT_EQ(parse_chunks({"\xEF", "\xBB", "\xBF" "data: x\n\n"}), (Events{"message|x|"}));
  // Only at the start of the stream: later it is part of the field name, an unknown field.
  EXPECT_EQ(parse_whole("data: x\n\n\xEF\xBB\xBF" "data: y\n\n"), (Events{"message|x|"}));
}

TEST(SseStream, EveryChunkingGivesTheSameEvents) {
  const std::string stream =
      ": welcome\r\nevent: first\r\nid: 1\r\ndata: {\"a\":1}\r\n\r\n"
      "data: line one\rdata:line two\r\r"
      "data: last\n\n";
  const Events expected{"first|{\"a\":1}|1", "message|line one\nline two|1", "message|last|1"};
  ASSERT_EQ(parse_whole(stream), expected);
  for (const auto& chunks : chunkings(stream)) {
    EXPECT_EQ(parse_chunks(chunks), expected) << "chunks: " << chunks.size();
  }
}

TEST(SseStream, FinishDiscardsAnEventCutAtTheEndAndReturnsItsText) {
  SseParser parser;
  EXPECT_EQ(parser.feed("data: whole\n\ndata: cut\ndata: off in the mi").size(), 1u);
  const auto discarded = parser.finish();
  ASSERT_TRUE(discarded.has_value());
  EXPECT_EQ(*discarded, "data: cut\ndata: off in the mi");
}

TEST(SseStream, FinishAfterTheBlankLineReportsNothing) {
  SseParser parser;
  parser.feed("data: x\n\n: trailing comment\n");
  EXPECT_EQ(parser.finish(), std::nullopt);
}

TEST(SseStream, FinishWithFieldsButNoBlankLineReportsTheCut) {
  SseParser parser;
  EXPECT_TRUE(parser.feed("data: x\n").empty());
  EXPECT_EQ(parser.finish(), "data: x\n");
}

}  // namespace
}  // namespace inferscope
