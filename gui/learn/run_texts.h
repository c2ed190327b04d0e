// An experiment run's requests as rich text for the Learn tab: each prompt with the part the prefix
// cache supplied highlighted (prefix caching), and each output with its tokens coloured by how
// speculative decoding produced them (the chat's per-token view).
#pragma once
#include <QString>
#include <cstdint>
#include <map>

#include "core/workload/workload_runner.h"
#include "core/learn/experiment_values.h"

namespace inferscope {
class LlamaModel;
}

namespace inferscope::gui {

// Each request's prompt tokens found in the prefix cache when it was first admitted (its first
// prefill step's StepSequence::cached_tokens), by request id.
std::map<RequestId, int32_t> prefix_cached_tokens(const EngineMetricsSnapshot& metrics);

// Every request of `run`: "request N · C of P prompt tokens cached", then its prompt with the cached
// part highlighted.
QString prefix_hits_html(const MeasuredRun& run, const LlamaModel& model);

// Every request of `run`: its output as coloured tokens (accepted draft, corrected, bonus, plain;
// refused drafts struck through), with the key to the colours first.
QString spec_tokens_html(const MeasuredRun& run, const LlamaModel& model);

}  // namespace inferscope::gui
