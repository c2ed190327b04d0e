// The block table's JSON form (core/engine/kv_snapshot_json.h): read back as written, and a table that
// points nowhere refused by name before the block view could index by it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/engine/kv_snapshot_json.h"

namespace inferscope {
namespace {

KvSnapshot two_sharing_a_block() {
  KvSnapshot s;
  s.kind = "paged";
  s.block_size = 16;
  s.blocks = {{{3, 4}, 2, 16, false, 0xfedcba9876543210ull}, {{3}, 1, 5, false, 0}, {{}, 0, 16, true, 42}, {{}, 0, 0, false, 0}};
  s.sequences = {{3, 21, {0, 1}, {1, 2, 3}, "curl/8.5.0 at 127.0.0.1"}, {4, 16, {0}, {}, {}}};
  return s;
}

TEST(KvSnapshotJson, ReadsBackWhatItWrites) {
  const KvSnapshot s = two_sharing_a_block();
  const nlohmann::json j = kv_snapshot_json(s);
  const KvSnapshot back = kv_snapshot_from_json(j, "kv");
  EXPECT_EQ(kv_snapshot_json(back), j);
  EXPECT_EQ(back.blocks[0].hash, 0xfedcba9876543210ull) << "a 64-bit hash survives";
  EXPECT_EQ(back.blocks[0].owners, (std::vector<SeqId>{3, 4}));
  EXPECT_TRUE(back.blocks[2].cached);
  EXPECT_EQ(back.sequences[0].block_table, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(back.sequences[0].tokens, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(back.sequences[0].client, "curl/8.5.0 at 127.0.0.1");
}

std::string refusal(const nlohmann::json& j) {
  try {
    kv_snapshot_from_json(j, "http://host/inferscope/v1/kv");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "accepted";
}

TEST(KvSnapshotJson, ATableThatPointsNowhereIsRefusedByName) {
  nlohmann::json j = kv_snapshot_json(two_sharing_a_block());
  j["sequences"][1]["block_table"] = {4};
  EXPECT_EQ(refusal(j), "http://host/inferscope/v1/kv: sequences[1]: block 4 is not one of the 4 blocks");
  j = kv_snapshot_json(two_sharing_a_block());
  j["blocks"][1]["owners"] = {9};
  EXPECT_EQ(refusal(j), "http://host/inferscope/v1/kv: blocks[1]: owner 9 is not one of the sequences");
  j = kv_snapshot_json(two_sharing_a_block());
  j["kind"] = "ring";
  EXPECT_NE(refusal(j).find("field 'kind'"), std::string::npos);
  j = kv_snapshot_json(two_sharing_a_block());
  j["blocks"][0]["filled"] = "full";
  EXPECT_NE(refusal(j).find("blocks[0]: field 'filled'"), std::string::npos);
  j = kv_snapshot_json(two_sharing_a_block());
  j.erase("sequences");
  EXPECT_NE(refusal(j).find("field 'sequences' is missing or not an array"), std::string::npos);
  EXPECT_NE(refusal(nlohmann::json(3)).find("not a JSON object"), std::string::npos);
}

}  // namespace
}  // namespace inferscope
