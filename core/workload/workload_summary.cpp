#include "core/workload/workload_summary.h"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace inferscope {
namespace {

std::string range_text(int32_t lo, int32_t hi) {
  return lo == hi ? std::to_string(lo) : std::to_string(lo) + "–" + std::to_string(hi);
}

std::string count_text(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

bool has_synthetic_prompt(const WorkloadRequest& request) {
  return request.prompt.empty() || request.shared_prefix_tokens > 0;
}

std::string describe_workload(const Workload& workload) {
  const std::vector<WorkloadRequest>& requests = workload.requests;
  if (requests.empty()) return "no requests.";
  double first = std::numeric_limits<double>::infinity(), last = 0;
  int32_t out_lo = std::numeric_limits<int32_t>::max(), out_hi = 0;
  int32_t random_lo = std::numeric_limits<int32_t>::max(), random_hi = 0, prefix_hi = 0;
  int64_t out_total = 0;
  size_t synthetic = 0, sharing = 0;
  for (const WorkloadRequest& r : requests) {
    first = std::min(first, r.arrival_s), last = std::max(last, r.arrival_s);
    out_lo = std::min(out_lo, r.output_tokens), out_hi = std::max(out_hi, r.output_tokens);
    out_total += r.output_tokens;
    if (r.shared_prefix_tokens > 0) ++sharing, prefix_hi = std::max(prefix_hi, r.shared_prefix_tokens);
    if (!has_synthetic_prompt(r)) continue;
    ++synthetic;
    // The pseudo-random ids of this prompt: its shared prefix and, without text, its own.
    const int32_t random = r.shared_prefix_tokens + (r.prompt.empty() ? r.prompt_tokens : 0);
    random_lo = std::min(random_lo, random), random_hi = std::max(random_hi, random);
  }
  char span[64];
  std::snprintf(span, sizeof span, "%.2f s", last - first);
  std::string text = count_text(requests.size(), "request", "requests");
  text += requests.size() == 1 ? "" : last > first ? std::string(" arriving over ") + span : " arriving together";
  text += ". ";
  if (synthetic == 0) {
    text += requests.size() == 1 ? "Its prompt is text. " : "Every prompt is text. ";
  } else {
    text += synthetic == requests.size() ? (requests.size() == 1 ? std::string("Its prompt is") : "Every prompt is")
                                          : std::to_string(synthetic) + " of the prompts are";
    text += " synthetic: " + range_text(random_lo, random_hi) +
            " pseudo-random token ids, not text, so the model's continuation is no answer to read (what such a "
            "request measures is timing, and whether A and B agree token for token). ";
  }
  if (sharing > 0) {
    text += count_text(sharing, "request starts", "requests start") + " with the same prefix of up to " +
            std::to_string(prefix_hi) + " tokens (a shared system prompt, which a prefix cache reuses). ";
  }
  text += range_text(out_lo, out_hi) + " output tokens" + (requests.size() == 1 ? "" : " each (" + std::to_string(out_total) + " in all)") + ".";
  return text;
}

}  // namespace inferscope
