// bench --step-costs: what one forward step costs at 1, 2, 3, 4, 6, 8 and 16 new tokens, after a
// context already cached, in two shapes: one sequence computing k tokens at once with a logits row
// for each (a verify of k - 1 drafts, a prefill chunk's tail) and k sequences of one token each (a
// decode batch). Each is reported as a multiple of the one-token step, beside the roofline's
// prediction (core/engine/step_cost.h against the measured roofs): every weight is read once per step
// whatever k is, so on the memory roof a k-token step costs what a one-token step does, until its
// FLOPs reach the compute roof. Both activation precisions are measured where the weights are quantized.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/engine/engine_config.h"
#include "core/model/llama_model.h"

namespace inferscope::cli {

inline const std::vector<int32_t> kStepCostTokens = {1, 2, 3, 4, 6, 8, 16};

struct StepCostPoint {
  std::string activations;     // "f32" or "q8"
  int32_t tokens = 0;          // k: new tokens in the step
  double one_sequence_s = 0;   // median step: one sequence, k tokens, k logits rows
  double sequences_s = 0;      // median step: k sequences, one token and one logits row each
  double predicted_one_sequence_s = 0, predicted_sequences_s = 0;  // the roofline's: max(bytes / bandwidth, FLOPs / peak)
};

// Measures every point of kStepCostTokens for each activation precision the weights take, `reps`
// steps each (after a warm-up), each sequence first holding `context` cached tokens; the roofs are
// measured on the same pool first. Throws UsageError for a context the model cannot hold.
std::vector<StepCostPoint> measure_step_costs(const LlamaModel& model, const EngineConfig& config, int32_t context,
                                              int64_t reps);

// Prints the points (md, csv or json), each as a multiple of its precision's one-token step, with the
// target for k <= 5: at most 1 + 0.15 (k - 1) of a one-token step (what speculation needs to pay).
void print_step_costs(const std::vector<StepCostPoint>& points, const std::string& output);

}  // namespace inferscope::cli
