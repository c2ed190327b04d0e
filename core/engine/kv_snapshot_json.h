// The block table (KvSnapshot) as JSON and back: what serve's /inferscope/v1/kv sends a workbench
// attached to it, whose block view draws it as it draws its own engine's.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "core/kv/kv_cache.h"

namespace inferscope {

// Where serve answers with it.
inline constexpr const char* kEngineKvPath = "/inferscope/v1/kv";

nlohmann::json kv_snapshot_json(const KvSnapshot& s);
// kv_snapshot_json's inverse. Throws std::runtime_error naming `where` and the field, also for a
// block table entry or a block owner that points nowhere (the block view indexes by them).
KvSnapshot kv_snapshot_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace inferscope
