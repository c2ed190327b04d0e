#include "core/workload/workload.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "core/common/file_bytes.h"
#include "core/common/json_field.h"

namespace inferscope {
namespace {

constexpr int64_t kMaxTokens = int64_t{1} << 24;

[[noreturn]] void fail(const std::string& source, size_t index, const std::string& field, const std::string& what) {
  throw WorkloadError(source + ": request " + std::to_string(index) + ": \"" + field + "\" " + what);
}

// An integer field in [min_value, kMaxTokens]; `fallback` when absent.
int32_t integer_field(const nlohmann::json& r, const std::string& field, int64_t min_value, int64_t fallback,
                      const std::string& source, size_t index) {
  if (!r.contains(field)) return static_cast<int32_t>(fallback);
  const nlohmann::json& v = r[field];
  const std::string wanted = min_value > 0 ? "must be a positive integer" : "must be a non-negative integer";
  if (!v.is_number_integer()) fail(source, index, field, wanted + " (got " + v.dump() + ")");
  const int64_t x = v.is_number_unsigned() ? static_cast<int64_t>(std::min<uint64_t>(v.get<uint64_t>(), kMaxTokens + 1))
                                           : v.get<int64_t>();
  if (x < min_value) fail(source, index, field, wanted + " (got " + v.dump() + ")");
  if (x > kMaxTokens) fail(source, index, field, "is too large (at most " + std::to_string(kMaxTokens) + ")");
  return static_cast<int32_t>(x);
}

WorkloadRequest parse_request(const nlohmann::json& r, const std::string& source, size_t index) {
  if (!r.is_object()) throw WorkloadError(source + ": request " + std::to_string(index) + " is not a JSON object");
  static const std::set<std::string> known = {"arrival_s", "prompt_tokens", "prompt", "output_tokens",
                                              "shared_prefix_tokens"};
  for (const auto& [key, value] : r.items()) {
    if (!known.contains(key)) fail(source, index, key, "is not a known field");
  }
  WorkloadRequest w;
  if (r.contains("arrival_s")) {
    const nlohmann::json& a = r["arrival_s"];
    if (!a.is_number() || !std::isfinite(a.get<double>()) || a.get<double>() < 0) {
      fail(source, index, "arrival_s", "must be a non-negative number of seconds (got " + a.dump() + ")");
    }
    w.arrival_s = a.get<double>();
  }
  if (r.contains("prompt") == r.contains("prompt_tokens")) {
    fail(source, index, "prompt_tokens", "or \"prompt\" must be given, and not both");
  }
  if (r.contains("prompt")) {
    if (!r["prompt"].is_string() || r["prompt"].get<std::string>().empty()) {
      fail(source, index, "prompt", "must be a non-empty string");
    }
    w.prompt = r["prompt"].get<std::string>();
  }
  if (!r.contains("output_tokens")) fail(source, index, "output_tokens", "is missing");
  w.output_tokens = integer_field(r, "output_tokens", 1, 0, source, index);
  w.shared_prefix_tokens = integer_field(r, "shared_prefix_tokens", 0, 0, source, index);
  if (r.contains("prompt_tokens")) {
    const int32_t total = integer_field(r, "prompt_tokens", 1, 0, source, index);
    if (w.shared_prefix_tokens > total) {
      fail(source, index, "shared_prefix_tokens",
           "(" + std::to_string(w.shared_prefix_tokens) + ") exceeds prompt_tokens (" + std::to_string(total) + ")");
    }
    // prompt_tokens counts the whole prompt; what follows the shared prefix is the request's own.
    w.prompt_tokens = total - w.shared_prefix_tokens;
  }
  return w;
}

// Appends n ids uniform over the vocabulary (rng() % n: the same on every platform, unlike
// std::uniform_int_distribution).
void append_random_ids(std::mt19937_64& rng, int32_t n, int32_t vocab_size, std::vector<TokenId>& out) {
  for (int32_t i = 0; i < n; ++i) out.push_back(static_cast<TokenId>(rng() % static_cast<uint64_t>(vocab_size)));
}

}  // namespace

Workload parse_workload(const nlohmann::json& root, const std::string& source) {
  if (!root.is_object() || !root.contains("requests") || !root["requests"].is_array()) {
    throw WorkloadError(source + ": expected an object with a \"requests\" array");
  }
  if (root["requests"].empty()) throw WorkloadError(source + ": \"requests\" is empty");
  Workload w;
  if (root.contains("description")) {
    if (!root["description"].is_string()) {
      throw WorkloadError(source + ": \"description\" must be a string (got " + root["description"].dump() + ")");
    }
    w.description = root["description"].get<std::string>();
  }
  for (size_t i = 0; i < root["requests"].size(); ++i) w.requests.push_back(parse_request(root["requests"][i], source, i));
  return w;
}

Workload parse_workload_text(std::string_view text, const std::string& source) {
  return parse_workload(parse_json_text<WorkloadError>(text, source), source);
}

Workload load_workload(const std::string& path) {
  const std::optional<std::string> text = read_file_bytes(path);
  if (!text) throw WorkloadError(path + ": cannot open the workload file");
  return parse_workload_text(*text, path);
}

Workload generate_workload(int32_t n, LengthRange prompt, LengthRange output, uint64_t seed) {
  if (n <= 0) throw std::invalid_argument("a generated workload needs at least one request");
  if (prompt.min < 1 || prompt.max < prompt.min || output.min < 1 || output.max < output.min) {
    throw std::invalid_argument("length ranges must be positive with min <= max");
  }
  std::mt19937_64 rng(seed);
  auto draw = [&rng](LengthRange r) {
    return r.min + static_cast<int32_t>(rng() % static_cast<uint64_t>(r.max - r.min + 1));
  };
  Workload w;
  for (int32_t i = 0; i < n; ++i) {
    WorkloadRequest r;
    r.prompt_tokens = draw(prompt);
    r.output_tokens = draw(output);
    w.requests.push_back(r);
  }
  return w;
}

std::vector<Request> materialize_workload(const Workload& workload, const Encoder& encode, int32_t vocab_size,
                                          uint64_t seed) {
  if (vocab_size <= 0) throw std::invalid_argument("materialize_workload: empty vocabulary");
  int32_t longest_prefix = 0;
  for (const WorkloadRequest& w : workload.requests) longest_prefix = std::max(longest_prefix, w.shared_prefix_tokens);
  // One shared prefix for everyone; each request takes as much of it as it asks for.
  std::vector<TokenId> shared;
  std::mt19937_64 prefix_rng(seed);
  append_random_ids(prefix_rng, longest_prefix, vocab_size, shared);

  std::vector<Request> out;
  for (size_t i = 0; i < workload.requests.size(); ++i) {
    const WorkloadRequest& w = workload.requests[i];
    Request r;
    r.id = static_cast<RequestId>(i);
    r.arrival_s = w.arrival_s;
    r.tokens.assign(shared.begin(), shared.begin() + w.shared_prefix_tokens);
    if (!w.prompt.empty()) {
      // BOS only when the text starts the prompt.
      const std::vector<TokenId> text = encode(w.prompt, w.shared_prefix_tokens == 0);
      r.tokens.insert(r.tokens.end(), text.begin(), text.end());
    } else {
      // Each request's own ids depend only on the seed and its index.
      std::mt19937_64 rng(seed ^ (0x9E3779B97F4A7C15ULL * (i + 1)));
      append_random_ids(rng, w.prompt_tokens, vocab_size, r.tokens);
    }
    if (r.tokens.empty()) throw WorkloadError("request " + std::to_string(i) + ": the prompt has no tokens");
    r.prompt_tokens = static_cast<int32_t>(r.tokens.size());
    r.max_output_tokens = w.output_tokens;
    out.push_back(std::move(r));
  }
  std::stable_sort(out.begin(), out.end(), [](const Request& a, const Request& b) { return a.arrival_s < b.arrival_s; });
  return out;
}

}  // namespace inferscope
