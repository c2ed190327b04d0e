#include "core/engine/step_metrics.h"

#include "core/common/field_as_double.h"

namespace inferscope {
namespace {

using U = MetricUnit;

// The dashboard's colours of the quantities drawn from this table (0xRRGGBB).
constexpr uint32_t kDurationRgb = 0x5a5a5a, kUsageRgb = 0x9467bd, kFragmentationRgb = 0x8c564b,
                   kReservedUnusedRgb = 0xd62728, kScratchRgb = 0xe377c2, kAttentionRgb = 0x3c3c8c, kMatmulRgb = 0xc87828;

std::vector<StepMetric> rows() {
  return {
      {"time_s", field_value<&StepMetrics::time_s>, set_field<&StepMetrics::time_s>, U::Seconds,
       "when the step ended, seconds since the engine started (the charts' time axis)"},
      {"duration_s", field_value<&StepMetrics::duration_s>, set_field<&StepMetrics::duration_s>, U::Seconds, "the step's wall time",
       "tokens_per_step", true, MetricLook::Line, "step duration", kDurationRgb},
      {"num_requests_running", field_value<&StepMetrics::num_requests_running>, set_field<&StepMetrics::num_requests_running>, U::Count,
       "requests running after the step"},
      {"num_requests_waiting", field_value<&StepMetrics::num_requests_waiting>, set_field<&StepMetrics::num_requests_waiting>, U::Count,
       "requests waiting after the step"},
      {"prefill_tokens", field_value<&StepMetrics::prefill_tokens>, set_field<&StepMetrics::prefill_tokens>, U::Tokens,
       "prompt tokens computed in the step (drawn as bars)", "tokens_per_step"},
      {"decode_tokens", field_value<&StepMetrics::decode_tokens>, set_field<&StepMetrics::decode_tokens>, U::Tokens,
       "decode tokens computed in the step, drafts scored included (drawn as bars)", "tokens_per_step"},
      {"kv_cache_usage_perc", field_value<&StepMetrics::kv_cache_usage_perc>, set_field<&StepMetrics::kv_cache_usage_perc>, U::Fraction,
       "the KV budget's share in use after the step", "kv_usage", false, MetricLook::Area, "KV usage", kUsageRgb, true},
      {"kv_internal_fragmentation_perc", field_value<&StepMetrics::kv_internal_fragmentation_perc>, set_field<&StepMetrics::kv_internal_fragmentation_perc>,
       U::Fraction, "slots allocated but not filled, of those allocated (paged: the last blocks' tails)", "kv_waste",
       false, MetricLook::Line, "internal fragmentation", kFragmentationRgb, true},
      {"kv_reserved_unused_perc", field_value<&StepMetrics::kv_reserved_unused_perc>, set_field<&StepMetrics::kv_reserved_unused_perc>, U::Fraction,
       "slots reserved but not yet used, of those reserved (contiguous: each sequence's unused context)", "kv_waste",
       false, MetricLook::Line, "reserved unused", kReservedUnusedRgb, true},
      {"attention_scratch_bytes", field_value<&StepMetrics::attention_scratch_bytes>, set_field<&StepMetrics::attention_scratch_bytes>, U::Bytes,
       "the attention implementation's scratch memory at its peak", "attention", false, MetricLook::Line,
       "scratch bytes", kScratchRgb, true},
      {"attention_seconds", field_value<&StepMetrics::attention_seconds>, set_field<&StepMetrics::attention_seconds>, U::Seconds,
       "time in attention, all layers", "attention", true, MetricLook::Line, "attention time", kAttentionRgb, true},
      {"matmul_seconds", field_value<&StepMetrics::matmul_seconds>, set_field<&StepMetrics::matmul_seconds>, U::Seconds,
       "time in matmuls, all layers and the output head", "attention", true, MetricLook::Line, "matmul time",
       kMatmulRgb, true},
      {"prefix_cache_queries", field_value<&StepMetrics::prefix_cache_queries>, set_field<&StepMetrics::prefix_cache_queries>, U::Tokens,
       "prompt tokens of the step's admissions looked up in the prefix cache"},
      {"prefix_cache_hits", field_value<&StepMetrics::prefix_cache_hits>, set_field<&StepMetrics::prefix_cache_hits>, U::Tokens,
       "of those, tokens found cached (not computed; drawn as bars under the prefill tokens)", "tokens_per_step"},
      {"spec_draft_tokens", field_value<&StepMetrics::spec_draft_tokens>, set_field<&StepMetrics::spec_draft_tokens>, U::Tokens,
       "draft tokens scored in the step", "spec_acceptance"},
      {"spec_accepted_tokens", field_value<&StepMetrics::spec_accepted_tokens>, set_field<&StepMetrics::spec_accepted_tokens>, U::Tokens,
       "of those, accepted", "spec_acceptance"},
      {"spec_chosen_k", field_value<&StepMetrics::spec_chosen_k>, set_field<&StepMetrics::spec_chosen_k>, U::Count,
       "the most drafts the step's speculating decodes could score, mean (-1: none speculated)", "spec_acceptance"},
      {"draft_seconds", field_value<&StepMetrics::draft_seconds>, set_field<&StepMetrics::draft_seconds>, U::Seconds, "time proposing the drafts",
       "spec_acceptance"},
      {"verify_seconds", field_value<&StepMetrics::verify_seconds>, set_field<&StepMetrics::verify_seconds>, U::Seconds,
       "the forward pass that scored the drafts (0 when nothing drafted)", "spec_acceptance"},
      {"pool_dispatches", field_value<&StepMetrics::pool_dispatches>, set_field<&StepMetrics::pool_dispatches>, U::Count,
       "thread-pool dispatches (wake-up and join) of the step's forward pass"},
      {"flops", field_value<&StepMetrics::flops>, set_field<&StepMetrics::flops>, U::Flops, "matmul and attention FLOPs of the step",
       "roofline"},
      {"weight_bytes_read", field_value<&StepMetrics::weight_bytes_read>, set_field<&StepMetrics::weight_bytes_read>, U::Bytes,
       "weight matrices read once, at the step's level", "roofline"},
      {"kv_bytes_read", field_value<&StepMetrics::kv_bytes_read>, set_field<&StepMetrics::kv_bytes_read>, U::Bytes,
       "K/V of each sequence's context, every layer", "roofline"},
  };
}

}  // namespace

const std::vector<StepMetric>& step_metrics_table() {
  static const std::vector<StepMetric> table = rows();
  return table;
}

std::vector<std::string> step_metrics_drawn_on(std::string_view panel) {
  std::vector<std::string> keys;
  for (const StepMetric& m : step_metrics_table())
    if (m.look != MetricLook::None && m.panel == panel) keys.push_back(m.key);
  return keys;
}

}  // namespace inferscope
