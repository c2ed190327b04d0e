// libFuzzer target for the readers of another Inferscope's engine snapshot (core/engine/metrics_json.h
// and kv_snapshot_json.h), which the workbench's remote engine runs on what a server sends. The input's
// first byte picks the reader; the rest is the body. Every body is read or refused with a
// std::runtime_error; a metrics snapshot it reads is written back as the same JSON, and a block table
// it reads points only at its own blocks and sequences.
#include <cstdint>
#include <cstdlib>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/common/json_field.h"
#include "core/engine/kv_snapshot_json.h"
#include "core/engine/metrics_json.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace inferscope;
  if (size == 0) return 0;
  try {
    const nlohmann::json j = parse_json_text(fuzz::text_of(data + 1, size - 1), "fuzz");
    if (data[0] % 2 == 0) {
      const nlohmann::json written = metrics_json(metrics_from_json(j, "fuzz"));
      if (metrics_json(metrics_from_json(written, "again")) != written) std::abort();
    } else {
      const KvSnapshot kv = kv_snapshot_from_json(j, "fuzz");
      std::set<SeqId> ids;
      for (const KvSnapshot::Sequence& q : kv.sequences) {
        ids.insert(q.id);
        for (int32_t block : q.block_table) {
          if (block < 0 || static_cast<size_t>(block) >= kv.blocks.size()) std::abort();
        }
      }
      for (const KvSnapshot::Block& b : kv.blocks) {
        for (SeqId owner : b.owners) {
          if (ids.count(owner) == 0) std::abort();
        }
      }
    }
  } catch (const std::runtime_error&) {
  }
  return 0;
}
