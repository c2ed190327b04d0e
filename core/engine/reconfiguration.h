// The engine's parts and how a config builds them: at start, on a config change between steps (all or
// nothing: everything that can fail is done before anything changes), when a background weight
// conversion finishes, and when the device fails and the engine moves to the CPU. The step loop
// (EngineCore) runs on the parts and never builds them.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/engine/background_conversion.h"
#include "core/engine/engine_config.h"
#include "core/engine/engine_core_options.h"
#include "core/engine/engine_metrics.h"
#include "core/executor/step_executor.h"
#include "core/kv/kv_cache.h"
#include "core/quant/converted_weights.h"
#include "core/sched/scheduler.h"
#include "core/spec/proposer.h"

namespace inferscope {

class LlamaModel;

// What a config builds and the step loop runs on.
struct EngineParts {
  EngineConfig config;
  KvConfig target_kv;  // what kv was built with: config.kv less a draft cache's share
  std::unique_ptr<KvCache> kv;
  RequestLimit limit;
  std::unique_ptr<ConvertedWeights> weights;  // what the executor reads (a view of the model's at native)
  std::unique_ptr<Proposer> proposer;         // drafts for speculative decoding (null when off)
  std::unique_ptr<StepExecutor> executor;
  std::unique_ptr<Scheduler> scheduler;
  // To another level while requests go on; last, so its worker stops before what it reports to goes.
  std::unique_ptr<BackgroundConversion> conversion;
};

// What a reconfiguration did: applied or not, what it says (on_config's message), and the requests
// that no longer fit the new cache (the step loop ends them, once the engine is in its new state).
struct Reconfigured {
  bool applied = false;
  std::string note;
  std::vector<RequestId> refused;
};

class Reconfigurer {
 public:
  // Everything given must outlive the reconfigurer; `parts` are empty until build().
  Reconfigurer(const LlamaModel& model, const EngineCoreOptions& options, LogitsFn on_logits, EngineParts& parts,
               EngineMetrics& metrics);
  ~Reconfigurer();
  // Builds every part for `config`; throws std::invalid_argument for a bad config.
  void build(const EngineConfig& config);
  // Applies a config between steps; threads and matmul stay fixed. A new device is refused when a
  // forward pass cannot be built there.
  Reconfigured apply(const EngineConfig& requested);
  // Swaps in a finished background conversion (or reports its failure).
  Reconfigured finish_conversion();
  // After `failure` on the device in use: the CPU from now on (a new cache, running requests
  // recomputed there); the metrics say why.
  Reconfigured fall_back_to_cpu(const std::string& failure);
  // Stops a background weight conversion and waits for its worker (the weights in use stay).
  void cancel_conversion();

 private:
  // A config checked and made ready (a new cache built, weights converted at once): committing it
  // changes state but cannot fail for a reason of the config.
  struct Prepared;
  // The proposer a config names, and the target cache's settings beside it.
  struct SpecSetup {
    std::unique_ptr<Proposer> proposer;
    KvConfig target_kv;  // c.kv less an own-KV draft's share of the budget
  };
  // What moving onto a new cache did: running requests preempted, waiting ones that no longer fit.
  struct CacheSwap {
    size_t preempted = 0;
    std::vector<RequestId> refused;
  };
  // Builds c.spec's proposer (loading or converting a draft model) on `target_weights`. An own-KV
  // draft takes its share of c.kv.budget_bytes; with `default_budget` the budget first grows by
  // room for as many tokens. Throws std::invalid_argument for a bad spec (or any spec in a dry run).
  SpecSetup build_spec(EngineConfig& c, bool default_budget, const LlamaWeights& target_weights) const;
  // Puts `proposer` in use for later steps.
  void use_proposer(std::unique_ptr<Proposer> proposer);
  // Everything about `requested` that can fail, with no state touched.
  Prepared prepare(const EngineConfig& requested) const;
  // Puts a prepared config in use. Starts (or cancels) a background conversion.
  Reconfigured commit(Prepared prepared);
  // Moves every request onto `kv`: running ones are preempted, to be recomputed there.
  CacheSwap swap_cache(std::unique_ptr<KvCache> kv, RequestLimit limit);
  // Puts `weights` in use (the cache must already be one they did not write to). The forward pass
  // over the old weights is freed first, so a device never holds both levels. When the new one cannot
  // be built there, the old one is built again and stays in use; when not even that can be, the
  // engine moves to the CPU (fall_back_to_cpu). Either way the failure comes back as a Reconfigured
  // that was not applied: why, and the requests the CPU's cache refused.
  std::optional<Reconfigured> use_weights(std::unique_ptr<ConvertedWeights> weights);
  std::string weights_note(size_t old_bytes, size_t preempted) const;
  void publish_weights();
  // The device in use and, when it is not the one asked for, why (`fallback`).
  void publish_device(const std::string& fallback);

  const LlamaModel& model_;
  const EngineCoreOptions& options_;
  const LogitsFn on_logits_;
  EngineParts& parts_;
  EngineMetrics& metrics_;
};

}  // namespace inferscope
