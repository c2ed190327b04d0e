// Workload files and generated workloads for serve-sim: parsing, validation messages that name the
// file, request and field, and deterministic token ids.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/workload/workload.h"
#include "core/workload/workload_summary.h"

namespace inferscope {
namespace {

// A stand-in tokenizer: one id per character (+1), BOS = 1 when asked.
std::vector<TokenId> fake_encode(std::string_view text, bool add_bos) {
  std::vector<TokenId> ids;
  if (add_bos) ids.push_back(1);
  for (char c : text) ids.push_back(static_cast<TokenId>(static_cast<unsigned char>(c)) + 1);
  return ids;
}

TEST(Workload, ParsesEveryKindOfRequest) {
  const auto j = nlohmann::json::parse(R"({"requests": [
      {"arrival_s": 0.5, "prompt_tokens": 500, "output_tokens": 300},
      {"prompt": "hi", "output_tokens": 4},
      {"arrival_s": 1, "prompt_tokens": 40, "shared_prefix_tokens": 32, "output_tokens": 8}]})");
  const Workload w = parse_workload(j, "w.json");
  ASSERT_EQ(w.requests.size(), 3u);
  EXPECT_DOUBLE_EQ(w.requests[0].arrival_s, 0.5);
  EXPECT_EQ(w.requests[0].prompt_tokens, 500);
  EXPECT_EQ(w.requests[0].output_tokens, 300);
  EXPECT_DOUBLE_EQ(w.requests[1].arrival_s, 0.0);  // arrival_s defaults to 0
  EXPECT_EQ(w.requests[1].prompt, "hi");
  EXPECT_EQ(w.requests[2].shared_prefix_tokens, 32);
  EXPECT_EQ(w.requests[2].prompt_tokens, 8);  // its own tokens after the shared prefix
}

struct Malformed {
  const char* request;  // the second request of the file (the first is valid)
  const char* field;    // what the message must name
};

class WorkloadMalformed : public ::testing::TestWithParam<Malformed> {};

TEST_P(WorkloadMalformed, NamesFileRequestAndField) {
  const std::string text = std::string(R"({"requests": [{"prompt_tokens": 4, "output_tokens": 4}, )") +
                           GetParam().request + "]}";
  try {
    parse_workload(nlohmann::json::parse(text), "bad.json");
    FAIL() << "accepted " << GetParam().request;
  } catch (const WorkloadError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("bad.json"), std::string::npos) << msg;
    EXPECT_NE(msg.find("request 1"), std::string::npos) << msg;
    EXPECT_NE(msg.find(GetParam().field), std::string::npos) << msg;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, WorkloadMalformed,
    ::testing::Values(Malformed{R"({"prompt_tokens": 4})", "\"output_tokens\" is missing"},
                      Malformed{R"({"prompt_tokens": 4, "output_tokens": 0})", "\"output_tokens\""},
                      Malformed{R"({"prompt_tokens": 4, "output_tokens": 2.5})", "\"output_tokens\""},
                      Malformed{R"({"prompt_tokens": 4, "output_tokens": "8"})", "\"output_tokens\""},
                      Malformed{R"({"prompt_tokens": -3, "output_tokens": 4})", "\"prompt_tokens\""},
                      Malformed{R"({"prompt_tokens": 99999999999, "output_tokens": 4})", "\"prompt_tokens\""},
                      Malformed{R"({"output_tokens": 4})", "\"prompt_tokens\" or \"prompt\""},
                      Malformed{R"({"prompt": "a", "prompt_tokens": 4, "output_tokens": 4})", "\"prompt\""},
                      Malformed{R"({"prompt": "", "output_tokens": 4})", "\"prompt\""},
                      Malformed{R"({"prompt": 7, "output_tokens": 4})", "\"prompt\""},
                      Malformed{R"({"arrival_s": -1, "prompt_tokens": 4, "output_tokens": 4})", "\"arrival_s\""},
                      Malformed{R"({"arrival_s": "now", "prompt_tokens": 4, "output_tokens": 4})", "\"arrival_s\""},
                      Malformed{R"({"prompt_tokens": 4, "shared_prefix_tokens": 5, "output_tokens": 4})",
                                "\"shared_prefix_tokens\""},
                      Malformed{R"({"prompt_tokens": 4, "shared_prefix_tokens": -1, "output_tokens": 4})",
                                "\"shared_prefix_tokens\""},
                      Malformed{R"({"prompt_tokens": 4, "output_token": 4})", "\"output_token\" is not a known field"},
                      Malformed{R"([4, 4])", "not a JSON object"}));

TEST(Workload, RejectsFilesWithoutRequests) {
  EXPECT_THROW(parse_workload(nlohmann::json::parse(R"({"request": []})"), "x.json"), WorkloadError);
  EXPECT_THROW(parse_workload(nlohmann::json::parse(R"({"requests": []})"), "x.json"), WorkloadError);
  EXPECT_THROW(parse_workload(nlohmann::json::parse(R"([1, 2])"), "x.json"), WorkloadError);
}

TEST(Workload, LoadNamesTheFileWhenMissingOrNotJson) {
  try {
    load_workload("/nonexistent/w.json");
    FAIL();
  } catch (const WorkloadError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/w.json"), std::string::npos) << e.what();
  }
  const std::string path = (std::filesystem::temp_directory_path() / "inferscope_bad_workload.json").string();
  std::ofstream(path) << "{\"requests\": [";
  try {
    load_workload(path);
    FAIL();
  } catch (const WorkloadError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not valid JSON"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

// nlohmann's parser throws out_of_range, not parse_error, for a number beyond a double: it escaped as
// another exception than WorkloadError.
TEST(Workload, NumberBeyondADoubleIsNotValidJson) {
  try {
    parse_workload_text(R"({"requests": [{"prompt_tokens": 1e999, "output_tokens": 1}]})", "w.json");
    FAIL();
  } catch (const WorkloadError& e) {
    EXPECT_NE(std::string(e.what()).find("w.json: not valid JSON: [json.exception.out_of_range.406] number overflow"), std::string::npos)
        << e.what();
  }
}

TEST(Workload, GeneratedLengthsAreUniformInRangeAndDeterministic) {
  const Workload a = generate_workload(200, {16, 512}, {4, 8}, 42);
  const Workload b = generate_workload(200, {16, 512}, {4, 8}, 42);
  const Workload c = generate_workload(200, {16, 512}, {4, 8}, 43);
  ASSERT_EQ(a.requests.size(), 200u);
  bool differs = false;
  int32_t lo = 1 << 30, hi = 0;
  for (size_t i = 0; i < a.requests.size(); ++i) {
    EXPECT_EQ(a.requests[i].prompt_tokens, b.requests[i].prompt_tokens);
    EXPECT_EQ(a.requests[i].output_tokens, b.requests[i].output_tokens);
    differs |= a.requests[i].prompt_tokens != c.requests[i].prompt_tokens;
    lo = std::min(lo, a.requests[i].prompt_tokens);
    hi = std::max(hi, a.requests[i].prompt_tokens);
    EXPECT_GE(a.requests[i].output_tokens, 4);
    EXPECT_LE(a.requests[i].output_tokens, 8);
    EXPECT_DOUBLE_EQ(a.requests[i].arrival_s, 0.0);
  }
  EXPECT_TRUE(differs) << "another seed gives other lengths";
  EXPECT_GE(lo, 16);
  EXPECT_LE(hi, 512);
  EXPECT_LT(lo, 64) << "200 draws should reach near both ends";
  EXPECT_GT(hi, 464);
  EXPECT_THROW(generate_workload(0, {1, 2}, {1, 2}, 1), std::invalid_argument);
  EXPECT_THROW(generate_workload(4, {5, 2}, {1, 2}, 1), std::invalid_argument);
}

TEST(Workload, MaterializedIdsAreDeterministicAndShareTheirPrefix) {
  const auto j = nlohmann::json::parse(R"({"requests": [
      {"arrival_s": 2, "prompt_tokens": 40, "shared_prefix_tokens": 32, "output_tokens": 8},
      {"arrival_s": 1, "prompt_tokens": 20, "shared_prefix_tokens": 16, "output_tokens": 8},
      {"arrival_s": 1, "prompt_tokens": 12, "output_tokens": 3},
      {"arrival_s": 3, "prompt": "ab", "shared_prefix_tokens": 8, "output_tokens": 5},
      {"arrival_s": 3, "prompt": "ab", "output_tokens": 5}]})");
  const Workload w = parse_workload(j, "w.json");
  const std::vector<Request> r = materialize_workload(w, fake_encode, 1000, 7);
  ASSERT_EQ(r.size(), 5u);
  // Sorted by arrival, ties in file order, ids from the file order.
  EXPECT_EQ(r[0].id, 1);
  EXPECT_EQ(r[1].id, 2);
  EXPECT_EQ(r[2].id, 0);
  EXPECT_EQ(r[3].id, 3);
  EXPECT_EQ(r[4].id, 4);
  const Request& long_prefix = r[2];
  const Request& short_prefix = r[0];
  EXPECT_EQ(long_prefix.prompt_tokens, 40);
  EXPECT_EQ(short_prefix.prompt_tokens, 20);
  EXPECT_EQ(long_prefix.max_output_tokens, 8);
  EXPECT_TRUE(std::equal(short_prefix.tokens.begin(), short_prefix.tokens.begin() + 16, long_prefix.tokens.begin()));
  EXPECT_NE(std::vector<TokenId>(short_prefix.tokens.begin() + 16, short_prefix.tokens.end()),
            std::vector<TokenId>(long_prefix.tokens.begin() + 16, long_prefix.tokens.begin() + 20))
      << "after the shared prefix each request has its own ids";
  // Text after a shared prefix: the prefix, then the text without BOS; alone: BOS first.
  std::vector<TokenId> prefixed(long_prefix.tokens.begin(), long_prefix.tokens.begin() + 8);
  prefixed.insert(prefixed.end(), {'a' + 1, 'b' + 1});
  EXPECT_EQ(r[3].tokens, prefixed);
  EXPECT_EQ(r[4].tokens, (std::vector<TokenId>{1, 'a' + 1, 'b' + 1}));
  for (const Request& q : r) {
    EXPECT_EQ(q.output_tokens(), 0);
    for (TokenId id : q.tokens) {
      EXPECT_GE(id, 0);
      EXPECT_LT(id, 1000);
    }
  }
  EXPECT_EQ(materialize_workload(w, fake_encode, 1000, 7)[2].tokens, long_prefix.tokens) << "same seed, same ids";
  EXPECT_NE(materialize_workload(w, fake_encode, 1000, 8)[2].tokens, long_prefix.tokens) << "the seed matters";
}

TEST(Workload, ShippedWorkloadsParse) {
  for (const char* name : {"mixed.json", "long_outputs.json", "shared_system_prompt.json"}) {
    const Workload w = load_workload(std::string(INFERSCOPE_SOURCE_DIR) + "/resources/workloads/" + name);
    EXPECT_GE(w.requests.size(), 16u) << name;
  }
  const Workload shared =
      load_workload(std::string(INFERSCOPE_SOURCE_DIR) + "/resources/workloads/shared_system_prompt.json");
  for (const WorkloadRequest& r : shared.requests) EXPECT_GE(r.shared_prefix_tokens, 512);
}

TEST(Workload, EveryShippedWorkloadSaysWhatItIsFor) {
  for (const auto& entry : std::filesystem::directory_iterator(std::string(INFERSCOPE_SOURCE_DIR) + "/resources/workloads")) {
    const Workload w = load_workload(entry.path().string());
    EXPECT_GE(w.description.size(), 40u) << entry.path();
  }
}

TEST(Workload, ADescriptionMustBeAString) {
  EXPECT_EQ(parse_workload_text(R"({"description": "two", "requests": [{"prompt": "a", "output_tokens": 1}]})", "w.json").description,
            "two");
  try {
    parse_workload_text(R"({"description": 3, "requests": [{"prompt": "a", "output_tokens": 1}]})", "w.json");
    FAIL() << "a number was taken as a description";
  } catch (const WorkloadError& e) {
    EXPECT_STREQ(e.what(), "w.json: \"description\" must be a string (got 3)");
  }
}

TEST(WorkloadSummary, SaysWhichPromptsAreSyntheticAndCountsTheWork) {
  const Workload w = parse_workload_text(R"({"requests": [
      {"arrival_s": 0.0, "prompt_tokens": 93, "output_tokens": 23},
      {"arrival_s": 0.5, "prompt": "Tell me a story", "output_tokens": 64},
      {"arrival_s": 1.25, "prompt_tokens": 509, "output_tokens": 255}]})", "w.json");
  EXPECT_TRUE(has_synthetic_prompt(w.requests[0]));
  EXPECT_FALSE(has_synthetic_prompt(w.requests[1]));
  EXPECT_EQ(describe_workload(w),
            "3 requests arriving over 1.25 s. 2 of the prompts are synthetic: 93–509 pseudo-random token ids, not text, "
            "so the model's continuation is no answer to read (what such a request measures is timing, and whether A "
            "and B agree token for token). 23–255 output tokens each (342 in all).");
}

TEST(WorkloadSummary, CountsSharedPrefixesAndTextPrompts) {
  const Workload text = parse_workload_text(R"({"requests": [{"prompt": "a", "output_tokens": 40},
      {"prompt": "b", "output_tokens": 40}]})", "w.json");
  EXPECT_EQ(describe_workload(text), "2 requests arriving together. Every prompt is text. 40 output tokens each (80 in all).");
  const Workload one = parse_workload_text(R"({"requests": [{"prompt": "a", "output_tokens": 8}]})", "w.json");
  EXPECT_EQ(describe_workload(one), "1 request. Its prompt is text. 8 output tokens.");
  const Workload shared = parse_workload_text(R"({"requests": [
      {"prompt_tokens": 900, "shared_prefix_tokens": 800, "output_tokens": 32},
      {"prompt": "question", "shared_prefix_tokens": 800, "output_tokens": 32}]})", "w.json");
  EXPECT_TRUE(has_synthetic_prompt(shared.requests[1])) << "its shared prefix is pseudo-random ids";
  const std::string d = describe_workload(shared);
  EXPECT_NE(d.find("Every prompt is synthetic: 800–900 pseudo-random token ids"), std::string::npos) << d;
  EXPECT_NE(d.find("2 requests start with the same prefix of up to 800 tokens"), std::string::npos) << d;
}

}  // namespace
}  // namespace inferscope
