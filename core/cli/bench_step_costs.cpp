#include "core/cli/bench_step_costs.h"

#include <chrono>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/attention/attention.h"
#include "core/attention/attention_factory.h"
#include "core/cli/args.h"
#include "core/cli/bench_tokens.h"
#include "core/common/text_format.h"
#include "core/workload/serve_summary.h"
#include "core/engine/step_cost.h"
#include "core/kv/kv_config.h"
#include "core/quant/converted_weights.h"
#include "core/servesim/dry_run_executor.h"
#include "core/executor/forward_factory.h"
#include "kernels/cpu/memory_bandwidth.h"
#include "kernels/cpu/peak_flops.h"
#include "kernels/cpu/thread_pool.h"

namespace inferscope::cli {
namespace {

// The target: a step of k <= kTargetTokens new tokens costs at most 1 + kTargetSlope (k - 1) of a one-token step.
constexpr int32_t kTargetTokens = 5;
constexpr double kTargetSlope = 0.15;

// The bench's fixture: a forward pass and a cache of kStepCostTokens.back() sequences, each holding
// `context` tokens.
class StepBench {
 public:
  StepBench(const LlamaModel& model, const LlamaWeights& weights, const EngineConfig& config, ThreadPool& pool,
            int32_t context)
      : model_(model), pool_(pool), context_(context), attention_(make_attention(config.attention)) {
    const int32_t most = kStepCostTokens.back();
    const KvGeometry geometry = model.kv_geometry(config.kv_dtype);
    KvConfig kv = config.kv;
    kv.prefix_cache = false;  // each sequence computes its own context
    kv.max_seq_len = context + most;
    kv.budget_bytes = kv_budget_for_sequences(geometry, kv, most);
    kv_ = make_kv_cache(geometry, kv);
    forward_ = make_forward(model, weights, config.forward, config.device);
    // Every sequence's context, one prefill step each.
    for (SeqId seq = 0; seq < most; ++seq) {
      const std::vector<TokenId> tokens = random_tokens(model, context, static_cast<uint64_t>(seq));
      if (!kv_->allocate(seq, context)) throw std::runtime_error("step costs: the KV cache has no room for the contexts");
      const BatchSeq b{seq, tokens, 0, 1};
      forward_->run({&b, 1}, *kv_, *attention_, pool_, logits_);
    }
  }

  // One step of `n_seqs` sequences, each computing `tokens` new ones with a logits row for each, timed;
  // their caches go back to the context after it.
  double step(int32_t n_seqs, int32_t tokens) {
    std::vector<std::vector<TokenId>> ids(static_cast<size_t>(n_seqs));
    std::vector<BatchSeq> batch;
    for (SeqId seq = 0; seq < n_seqs; ++seq) {
      ids[static_cast<size_t>(seq)] = random_tokens(model_, tokens, static_cast<uint64_t>(seq));
      if (!kv_->allocate(seq, tokens)) throw std::runtime_error("step costs: the KV cache has no room for the step");
      batch.push_back({seq, ids[static_cast<size_t>(seq)], context_, tokens});
    }
    const auto start = std::chrono::steady_clock::now();
    forward_->run(batch, *kv_, *attention_, pool_, logits_);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (SeqId seq = 0; seq < n_seqs; ++seq) kv_->truncate(seq, context_);
    return seconds;
  }

  size_t kv_bytes_per_token() const { return kv_->geometry().bytes_per_token(); }

 private:
  const LlamaModel& model_;
  ThreadPool& pool_;
  int32_t context_;
  std::unique_ptr<Attention> attention_;
  std::unique_ptr<KvCache> kv_;
  std::unique_ptr<ForwardPass> forward_;
  std::vector<float> logits_;
};

bool quantized(const LlamaWeights& weights) {
  return !weights.layers.empty() && dtype_info(weights.layers.front().wq.type).block_size > 1;
}

double times(double seconds, double one) { return one > 0 ? seconds / one : 0; }

}  // namespace

std::vector<StepCostPoint> measure_step_costs(const LlamaModel& model, const EngineConfig& config, int32_t context,
                                              int64_t reps) {
  if (context < 1 || context + kStepCostTokens.back() > model.config().context_length) {
    throw UsageError("--step-costs: a context of " + std::to_string(context) + " tokens and steps of up to " +
                     std::to_string(kStepCostTokens.back()) + " do not fit the model's context length of " +
                     std::to_string(model.config().context_length));
  }
  ThreadPool pool(config.threads);
  std::unique_ptr<ConvertedWeights> converted;
  if (config.quant != WeightQuant::Native) converted = ConvertedWeights::convert(model, config.quant, pool);
  const LlamaWeights& weights = converted ? converted->weights() : model.weights();
  const BandwidthResult bandwidth = measure_read_bandwidth(pool, size_t{256} << 20, 3);
  const PeakFlopsResult peak = measure_peak_flops(pool, 0.5);

  std::vector<ActivationPrecision> precisions = {ActivationPrecision::F32};
  if (quantized(weights)) precisions.push_back(ActivationPrecision::Q8);
  std::vector<StepCostPoint> points;
  for (const ActivationPrecision activations : precisions) {
    EngineConfig c = config;
    c.forward.matmul.activations = activations;
    StepBench bench(model, weights, c, pool, context);
    const StepCostModel costs(model.config(), weights, bench.kv_bytes_per_token());
    // The roofline's time for a step, without a per-step overhead.
    const RooflineDevice roofs{bandwidth.read_bytes_per_second, peak.flops_per_second, 0};
    const auto predicted = [&](int32_t n_seqs, int32_t tokens) {
      StepCost cost;
      cost.weight_bytes = costs.step_weight_bytes();
      for (int32_t s = 0; s < n_seqs; ++s) costs.add_sequence(cost, context, tokens, tokens);
      return roofs.seconds(cost.flops(), cost.bytes());
    };
    for (const int32_t k : kStepCostTokens) {
      StepCostPoint p;
      p.activations = activations == ActivationPrecision::Q8 ? "q8" : "f32";
      p.tokens = k;
      // Alternating the two shapes, after one warm-up step of each.
      bench.step(1, k);
      bench.step(k, 1);
      std::vector<double> one, many;
      for (int64_t r = 0; r < reps; ++r) {
        one.push_back(bench.step(1, k));
        many.push_back(bench.step(k, 1));
      }
      p.one_sequence_s = quantile(one, 0.5);
      p.sequences_s = quantile(many, 0.5);
      p.predicted_one_sequence_s = predicted(1, k);
      p.predicted_sequences_s = predicted(k, 1);
      points.push_back(p);
    }
  }
  return points;
}

void print_step_costs(const std::vector<StepCostPoint>& points, const std::string& output) {
  // Each precision's one-token step, the unit of its rows.
  const auto one_token = [&](const StepCostPoint& p) {
    for (const StepCostPoint& q : points)
      if (q.activations == p.activations && q.tokens == 1) return q;
    return p;
  };
  const auto target = [](int32_t k) { return k <= kTargetTokens ? 1 + kTargetSlope * (k - 1) : 0.0; };
  if (output == "json") {
    nlohmann::json rows = nlohmann::json::array();
    for (const StepCostPoint& p : points) {
      const StepCostPoint unit = one_token(p);
      nlohmann::json row = {{"activations", p.activations},
                            {"tokens", p.tokens},
                            {"one_sequence_seconds", p.one_sequence_s},
                            {"one_sequence_x", times(p.one_sequence_s, unit.one_sequence_s)},
                            {"roofline_one_sequence_seconds", p.predicted_one_sequence_s},
                            {"sequences_seconds", p.sequences_s},
                            {"sequences_x", times(p.sequences_s, unit.sequences_s)},
                            {"roofline_sequences_seconds", p.predicted_sequences_s},
                            {"roofline_one_sequence_x", times(p.predicted_one_sequence_s, unit.predicted_one_sequence_s)},
                            {"roofline_sequences_x", times(p.predicted_sequences_s, unit.predicted_sequences_s)}};
      if (target(p.tokens) > 0) row["target_x"] = target(p.tokens);
      rows.push_back(row);
    }
    std::cout << rows.dump(2) << "\n";
    return;
  }
  const bool csv = output == "csv";
  std::cout << (csv ? "activations,tokens,one_sequence_ms,roofline_one_sequence_ms,one_sequence_x,roofline_one_sequence_x,"
                      "sequences_ms,roofline_sequences_ms,sequences_x,roofline_sequences_x,target_x\n"
                    : "| activations | tokens | one sequence ms | roofline ms | × 1-token | roofline × | k sequences ms | "
                      "roofline ms | × 1-token | roofline × | target × |\n"
                      "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const StepCostPoint& p : points) {
    const StepCostPoint unit = one_token(p);
    const std::string t = target(p.tokens) > 0 ? format_number(target(p.tokens), "%.2f") : "";
    const std::vector<std::string> cells = {
        p.activations,
        std::to_string(p.tokens),
        format_number(p.one_sequence_s * 1e3, "%.2f"),
        format_number(p.predicted_one_sequence_s * 1e3, "%.2f"),
        format_number(times(p.one_sequence_s, unit.one_sequence_s), "%.2f"),
        format_number(times(p.predicted_one_sequence_s, unit.predicted_one_sequence_s), "%.2f"),
        format_number(p.sequences_s * 1e3, "%.2f"),
        format_number(p.predicted_sequences_s * 1e3, "%.2f"),
        format_number(times(p.sequences_s, unit.sequences_s), "%.2f"),
        format_number(times(p.predicted_sequences_s, unit.predicted_sequences_s), "%.2f"),
        t};
    for (size_t i = 0; i < cells.size(); ++i) std::cout << (csv ? (i ? "," : "") : "| ") << cells[i] << (csv ? "" : " ");
    std::cout << (csv ? "\n" : "|\n");
  }
}

}  // namespace inferscope::cli
