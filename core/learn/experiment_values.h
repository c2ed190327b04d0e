// The values an experiment's narration can use (core/learn/narration.h), all numbers:
//   RUN.<summary field>           every number of serve-sim's summary (serve_summary.h: tokens_per_second,
//                                 time_to_first_token_seconds_p50, kv_reserved_unused_perc_mean, ...,
//                                 spec_decode.acceptance_rate, spec_decode.mean_acceptance_length)
//   RUN.prefill_seconds / decode_seconds         time in steps that computed prompt tokens / only decodes
//   RUN.prefill_tokens_per_second / decode_tokens_per_second   engine throughput in those steps
//   RUN.prefill_intensity / decode_intensity     FLOPs per byte read in those steps (step_cost.h)
//   RUN.prefill_flops_per_second / decode_flops_per_second, RUN.prefill_bytes_per_second / decode_bytes_per_second
//   RUN.attention_seconds, RUN.matmul_seconds, RUN.attention_scratch_bytes_peak
//   RUN.decode_steps, decode_dispatches_per_step (thread-pool wake-ups and joins), decode_seconds_per_step,
//   RUN.decode_output_tokens_per_step   what a decode step added to the outputs: 1 per request, plus
//                                 its accepted drafts (decode_tokens_per_second counts drafts scored too)
//   RUN.verify_steps, draft_seconds_per_pass, verify_seconds_per_pass   the steps that scored drafts, and
//                                 their mean drafting and verifying time (the acceptance chart's lines)
//   RUN.weight_bytes              the weights the run's steps read, at its quantization level
//   RUN.kv_bytes_per_token        K and V of one token, every layer, in the run's KV dtype
//   RUN.peak_used_bytes, peak_filled_tokens, peak_allocated_tokens, peak_unused_tokens,
//   RUN.peak_unused_bytes, peak_sequences        the KV cache at the run's peak use
//   RUN.ttft_ms_p50, RUN.request_decode_tokens_per_second_mean   per request: TTFT, its own decode speed
//   RUN.spec_k (draft tokens per step at most; 0 without speculation), RUN.spec_decode.acceptance_at_N (the
//   share of drafts whose token N, 1-based, was accepted), RUN.spec_chosen_k_mean and
//   RUN.spec_undrafted_steps (over the steps with a speculating decode: the mean draft length allowed,
//   and how many allowed none, as k = auto chooses)
//   RUN.perplexity                the experiment's perplexity text scored at the run's config
//   same_outputs.A.B, first_divergence.A.B       for every pair of runs (-1: identical)
//   max_logit_diff.A.B            the largest logit difference over the tokens both runs chose from the
//                                 same inputs, when an experiment names it (workload_runner.h)
//   sweep.PHASE.IMPL.seconds.N, sweep.PHASE.IMPL.scratch_bytes.N   the attention sweep (PHASE prefill or
//   sweep.PHASE.speedup.N (naive / flash), sweep.PHASE.max_abs_diff.N     decode, IMPL naive or flash,
//   sweep.PHASE.crossover (the shortest context from which flash is faster at every longer one; -1:
//   slower at the longest), sweep.shortest, sweep.longest                 N a context)
//   model.n_layers, n_heads, n_kv_heads, head_dim, dim, ffn_dim, vocab_size, context_length,
//   model.sliding_window (0: none), model.local_layers (the layers it holds for),
//   model.gqa_ratio (query heads per KV head), model.parameters, model.native_weight_bytes,
//   model.native_bits_per_weight (the file's matrices as stored)
//   machine.peak_flops, machine.read_bandwidth   measured (kernels/cpu), when an experiment uses them
//                                                or draws a roofline
// and then the experiment's own "values", evaluated in dependency order.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/attention/attention_bench.h"
#include "core/workload/workload_runner.h"
#include "core/kv/kv_cache.h"
#include "core/learn/experiment.h"
#include "core/learn/expression.h"

namespace inferscope {

class LlamaModel;

struct MeasuredRun {
  std::string name;
  std::vector<Request> requests;  // the workload as run (prompt ids)
  WorkloadResult result;
  KvStats peak_kv;          // the cache when it held the most
  KvSnapshot peak_blocks;   // and its block tables then
  size_t kv_bytes_per_token = 0;
  std::optional<double> perplexity;  // with the experiment's perplexity text
};

// Adds `run`'s values under "NAME.".
void add_run_values(ValueMap& values, const MeasuredRun& run);
// Adds same_outputs.A.B, first_divergence.A.B and (where both kept logits of `vocab` entries a row)
// max_logit_diff.A.B for every ordered pair of runs.
void add_pair_values(ValueMap& values, const std::vector<MeasuredRun>& runs, size_t vocab);
// Adds the attention sweep's sweep.* values.
void add_sweep_values(ValueMap& values, const std::vector<AttentionBenchRow>& rows);
void add_model_values(ValueMap& values, const LlamaModel& model);
// Evaluates the experiment's derived values; a value may use any other. Throws ExpressionError for
// one that names something that exists nowhere, or values that depend on each other in a circle.
void add_derived_values(ValueMap& values, const std::vector<std::pair<std::string, std::string>>& derived);

}  // namespace inferscope
