#include "core/engine/kv_snapshot_json.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "core/common/json_field.h"

namespace inferscope {
namespace {

using nlohmann::json;

const json& array_field(const json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key) || !j.at(key).is_array()) {
    throw std::runtime_error(where + ": field '" + key + "' is missing or not an array");
  }
  return j.at(key);
}

}  // namespace

json kv_snapshot_json(const KvSnapshot& s) {
  json blocks = json::array();
  for (const KvSnapshot::Block& b : s.blocks) {
    blocks.push_back({{"owners", b.owners}, {"ref_count", b.ref_count}, {"filled", b.filled}, {"cached", b.cached}, {"hash", b.hash}});
  }
  json sequences = json::array();
  for (const KvSnapshot::Sequence& q : s.sequences) {
    sequences.push_back({{"id", q.id}, {"length", q.length}, {"block_table", q.block_table}, {"tokens", q.tokens}, {"client", q.client}});
  }
  return {{"kind", s.kind}, {"block_size", s.block_size}, {"blocks", std::move(blocks)}, {"sequences", std::move(sequences)}};
}

KvSnapshot kv_snapshot_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) throw std::runtime_error(where + ": not a JSON object");
  KvSnapshot s;
  s.kind = json_field<std::string>(j, "kind", where);
  if (s.kind != "paged" && s.kind != "contiguous") throw std::runtime_error(where + ": field 'kind' is neither \"paged\" nor \"contiguous\": " + s.kind);
  s.block_size = json_field<int32_t>(j, "block_size", where);
  const json& blocks = array_field(j, "blocks", where);
  for (size_t i = 0; i < blocks.size(); ++i) {
    const std::string at = where + ": blocks[" + std::to_string(i) + "]";
    s.blocks.push_back({json_field<std::vector<SeqId>>(blocks[i], "owners", at), json_field<int32_t>(blocks[i], "ref_count", at),
                        json_field<int32_t>(blocks[i], "filled", at), json_field<bool>(blocks[i], "cached", at),
                        json_field<uint64_t>(blocks[i], "hash", at)});
  }
  const json& sequences = array_field(j, "sequences", where);
  std::set<SeqId> ids;
  const auto blocks_count = static_cast<int64_t>(s.blocks.size());
  for (size_t i = 0; i < sequences.size(); ++i) {
    const std::string at = where + ": sequences[" + std::to_string(i) + "]";
    KvSnapshot::Sequence q{json_field<SeqId>(sequences[i], "id", at), json_field<int32_t>(sequences[i], "length", at),
                           json_field<std::vector<int32_t>>(sequences[i], "block_table", at),
                           json_field<std::vector<int32_t>>(sequences[i], "tokens", at),
                           json_field<std::string>(sequences[i], "client", at)};
    for (int32_t block : q.block_table) {
      if (block < 0 || block >= blocks_count) {
        throw std::runtime_error(at + ": block " + std::to_string(block) + " is not one of the " + std::to_string(blocks_count) + " blocks");
      }
    }
    ids.insert(q.id);
    s.sequences.push_back(std::move(q));
  }
  for (size_t i = 0; i < s.blocks.size(); ++i) {
    for (SeqId owner : s.blocks[i].owners) {
      if (ids.count(owner) == 0) {
        throw std::runtime_error(where + ": blocks[" + std::to_string(i) + "]: owner " + std::to_string(owner) + " is not one of the sequences");
      }
    }
  }
  return s;
}

}  // namespace inferscope
