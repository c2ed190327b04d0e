#include "core/engine/setting_table.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>

#include "core/common/text_format.h"
#include "core/kv/kv_dtype.h"

namespace inferscope {
namespace {

using Assign = std::function<void(EngineConfig&, const std::string&)>;
template <typename T>
using Read = std::function<T(const EngineConfig&)>;
template <typename T>
using Write = std::function<void(EngineConfig&, T)>;

const std::string kNewCache = "a new KV cache: running requests are preempted and recomputed";
const std::string kNextStep = "none: the next step uses it";
const std::string kNewEngine = "a new engine, built once no request runs";
const std::string kNewProposer = "a new proposer; a draft with a KV cache of its own shares the budget anew";

// Every speculation mode's name, in kSpecModes order.
std::vector<std::string> spec_mode_choices() {
  std::vector<std::string> out;
  for (const SpecModeInfo& m : kSpecModes) out.emplace_back(m.name);
  return out;
}

// `text` as a whole number in lo..hi; `lowest_means` (when given) stands for lo.
int64_t parse_integer(const std::string& text, int64_t lo, int64_t hi, const std::string& lowest_means) {
  if (!lowest_means.empty() && text == lowest_means) return lo;
  int64_t v = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) throw SettingError("is not an integer");
  if (v < lo || v > hi) throw SettingError("is out of range (" + std::to_string(lo) + ".." + std::to_string(hi) + ")");
  return v;
}

float parse_real(const std::string& text, double lo, double hi) {
  float v = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) throw SettingError("is not a number");
  if (v < lo || v > hi) throw SettingError("is out of range (" + format_number(lo) + ".." + format_number(hi) + ")");
  return v;
}

EngineSetting choice(EngineSetting s, std::vector<std::string> choices, Read<std::string> get, Assign assign) {
  s.kind = SettingKind::Choice;
  s.choices = choices;
  s.get = std::move(get);
  s.set = [choices = std::move(choices), assign = std::move(assign)](EngineConfig& c, const std::string& text) {
    if (std::find(choices.begin(), choices.end(), text) == choices.end()) {
      throw SettingError("is not one of " + join(choices));
    }
    assign(c, text);
  };
  return s;
}

EngineSetting integer(EngineSetting s, int64_t lo, int64_t hi, Read<int64_t> get, Write<int64_t> assign) {
  s.kind = SettingKind::Integer;
  s.min = static_cast<double>(lo);
  s.max = static_cast<double>(hi);
  s.get = [get = std::move(get)](const EngineConfig& c) { return std::to_string(get(c)); };
  s.set = [lo, hi, word = s.lowest_means, assign = std::move(assign)](EngineConfig& c, const std::string& text) {
    assign(c, parse_integer(text, lo, hi, word));
  };
  return s;
}

EngineSetting real(EngineSetting s, double lo, double hi, Read<float> get, Write<float> assign) {
  s.kind = SettingKind::Real;
  s.min = lo;
  s.max = hi;
  s.get = [get = std::move(get)](const EngineConfig& c) {
    char text[32];
    const auto end = std::to_chars(text, text + sizeof text, get(c)).ptr;  // the shortest text that reads back
    return std::string(text, end);
  };
  s.set = [lo, hi, word = s.lowest_means, assign = std::move(assign)](EngineConfig& c, const std::string& text) {
    assign(c, !word.empty() && text == word ? static_cast<float>(lo) : parse_real(text, lo, hi));
  };
  return s;
}

EngineSetting on_off(EngineSetting s, Read<bool> get, Write<bool> assign) {
  s.kind = SettingKind::Switch;
  s.get = [get = std::move(get)](const EngineConfig& c) { return std::string(get(c) ? "on" : "off"); };
  s.set = [assign = std::move(assign)](EngineConfig& c, const std::string& text) {
    // "true" and "false" are how JSON and earlier settings files wrote it.
    if (text == "on" || text == "true") return assign(c, true);
    if (text == "off" || text == "false") return assign(c, false);
    throw SettingError("is not on or off");
  };
  return s;
}

// Whether `value` is the setting's lowest, which stands for lowest_means.
bool at_lowest(const EngineSetting& s, const std::string& value) {
  if (s.lowest_means.empty()) return false;
  if (value == s.lowest_means) return true;
  if (s.kind == SettingKind::Integer) return value == std::to_string(static_cast<int64_t>(s.min));
  return s.kind == SettingKind::Real && std::strtod(value.c_str(), nullptr) == s.min;
}

bool paged(const EngineConfig& c) { return c.kv.kind == KvKind::Paged; }
bool model_draft(const EngineConfig& c) {
  return c.spec.mode == SpecMode::Draft || c.spec.mode == SpecMode::SelfQuant || c.spec.mode == SpecMode::EarlyExit;
}
std::function<bool(const EngineConfig&)> spec_mode_is(SpecMode mode) {
  return [mode](const EngineConfig& c) { return c.spec.mode == mode; };
}

std::vector<EngineSetting> kv_cache_rows() {
  const std::string section = "KV cache";
  return {
      choice({.key = "kv", .flag = "--kv",
              .help = "KV cache manager: paged (default, PagedAttention blocks) | contiguous (one reservation per sequence)",
              .switch_cost = kNewCache, .section = section, .label = "manager", .name = "KV",
              .explanation = "Paged hands out fixed blocks as tokens arrive (vLLM); contiguous reserves a whole "
                             "context per sequence.",
              .summary = [](const EngineConfig& c) {
                return c.kv.kind == KvKind::Paged ? "paged " + std::to_string(c.kv.block_size) : std::string("contiguous");
              }},
             {"paged", "contiguous"}, [](const EngineConfig& c) { return std::string(kv_kind_name(c.kv.kind)); },
             [](EngineConfig& c, const std::string& v) { c.kv.kind = *kv_kind_from_name(v); }),
      choice({.key = "block_size", .flag = "--block-size", .help = "paged KV: tokens per block, 8 | 16 (default) | 32",
              .switch_cost = kNewCache, .section = section, .label = "block size", .name = "block size",
              .explanation = "Tokens per paged block: smaller blocks waste less in each sequence's last block.",
              .applies = paged, .applies_when = "--kv paged"},
             {"8", "16", "32"}, [](const EngineConfig& c) { return std::to_string(c.kv.block_size); },
             [](EngineConfig& c, const std::string& v) { c.kv.block_size = std::stoi(v); }),
      integer({.key = "kv_budget_mib", .flag = "--kv-budget-mib",
               .help = "KV cache memory in MiB (default: room for the full context)", .step = 16,
               .lowest_means = "auto", .unit = " MiB", .switch_cost = kNewCache, .section = section,
               .label = "budget", .name = "KV budget",
               .explanation = "Memory for every sequence's keys and values; when full, requests wait or are "
                              "preempted. auto: room for four full-context sequences (one on the command line).",
               .summary = [](const EngineConfig& c) {
                 return format_number(static_cast<double>(c.kv.budget_bytes) / (1 << 20), "%.0f MiB");
               }},
              0, 1 << 20, [](const EngineConfig& c) { return static_cast<int64_t>(c.kv.budget_bytes >> 20); },
              [](EngineConfig& c, int64_t v) { c.kv.budget_bytes = static_cast<size_t>(v) << 20; }),
      integer({.key = "context", .flag = "--ctx", .alias = "-c", .help = "context length (default: the model's)",
               .step = 256, .lowest_means = "model's", .switch_cost = kNewCache, .section = section,
               .label = "context", .name = "context",
               .explanation = "Longest conversation in tokens; contiguous mode reserves this much per sequence."},
              0, 1 << 24, [](const EngineConfig& c) { return int64_t{c.context_length}; },
              [](EngineConfig& c, int64_t v) {
                c.context_length = static_cast<int32_t>(v);
                c.kv.max_seq_len = 0;  // the contiguous reservation follows the context
              }),
      on_off({.key = "prefix_cache", .flag = "--prefix-cache",
              .help = "paged KV: reuse cached blocks of identical prompt prefixes, on (default) | off",
              .switch_cost = kNewCache, .section = section, .label = "prefix cache", .name = "prefix cache",
              .explanation = "Paged: full blocks with the same prompt prefix are shared, not recomputed.",
              .switch_text = "reuse cached prompt prefixes", .applies = paged, .applies_when = "--kv paged",
              .summary = [](const EngineConfig& c) { return std::string(paged(c) && c.kv.prefix_cache ? "prefix cache" : ""); }},
             [](const EngineConfig& c) { return c.kv.prefix_cache; },
             [](EngineConfig& c, bool v) { c.kv.prefix_cache = v; }),
      choice({.key = "kv_dtype", .flag = "--kv-dtype",
              .help = "KV cache precision: f16 (default) | f32 | q8 (int8 blocks of 32 with a scale)",
              .switch_cost = kNewCache, .section = section, .label = "KV dtype", .name = "KV dtype",
              .explanation = "Precision of the cached keys and values: f32 doubles the bytes per token, q8 (Q8_0) "
                             "about halves them.",
              .summary = [](const EngineConfig& c) { return "KV " + std::string(kv_dtype_name(c.kv_dtype)); }},
             kv_dtype_names(), [](const EngineConfig& c) { return std::string(kv_dtype_name(c.kv_dtype)); },
             [](EngineConfig& c, const std::string& v) { c.kv_dtype = *kv_dtype_from_name(v); }),
  };
}

std::vector<EngineSetting> compute_rows() {
  const std::string section = "Compute";
  return {
      choice({.key = "attention", .flag = "--attention",
              .help = "attention: flash (default, tiled with online softmax) | naive (full score matrix)",
              .switch_cost = kNextStep, .section = section, .label = "attention", .name = "attention",
              .explanation = "Naive builds the whole score matrix per head; flash streams K/V tiles with an online "
                             "softmax, summing in another order (close, not bit-identical).",
              .summary = [](const EngineConfig& c) { return c.attention; }},
             {"flash", "naive"}, [](const EngineConfig& c) { return c.attention; },
             [](EngineConfig& c, const std::string& v) { c.attention = v; }),
      on_off({.key = "fuse", .flag = "--fuse",
              .help = "operator fusion: on (default: Q/K/V and gate/up as one dispatch each) | off (one per product)",
              .timing = SettingTiming::Build, .switch_cost = kNewEngine, .section = section,
              .label = "operator fusion", .name = "operator fusion",
              .explanation = "On: Q, K and V (and gate and up) run as one thread-pool dispatch each; off: one per "
                             "product. Same output bit for bit.",
              .switch_text = "fuse Q/K/V and gate/up",
              .summary = [](const EngineConfig& c) { return std::string(c.forward.matmul.fuse ? "" : "unfused"); }},
             [](const EngineConfig& c) { return c.forward.matmul.fuse; },
             [](EngineConfig& c, bool v) { c.forward.matmul.fuse = v; }),
      choice({.key = "quant", .flag = "--quant",
              .help = "weight format: native (default, the file's own) | f32 | f16 | q8 | q4 | q4_1 | q4_k (Q4_K_M "
                      "mix) | q6_k (converted after loading)",
              .switch_cost = "converts the weights in the background; a new KV cache when they swap in",
              .section = section, .label = "quantization", .name = "weights",
              .explanation = "The weight format the matmuls read (native: as stored in the file); a change converts "
                             "in the background.",
              .summary = [](const EngineConfig& c) {
                return c.quant == WeightQuant::Native ? std::string() : "weights " + std::string(weight_quant_name(c.quant));
              }},
             weight_quant_name_list(), [](const EngineConfig& c) { return std::string(weight_quant_name(c.quant)); },
             [](EngineConfig& c, const std::string& v) { c.quant = *weight_quant_from_name(v); }),
      choice({.key = "activations", .flag = "--activations",
              .help = "how activations meet quantized weights: f32 (default, exact) | q8 (int8, as llama.cpp)",
              .timing = SettingTiming::Build, .switch_cost = kNewEngine, .section = section,
              .label = "activations", .name = "activations",
              .explanation = "f32: quantized weights meet exact activations; q8: activations are rounded to int8 "
                             "blocks, as llama.cpp does (faster, may change the text)."},
             {"f32", "q8"},
             [](const EngineConfig& c) {
               return std::string(c.forward.matmul.activations == ActivationPrecision::Q8 ? "q8" : "f32");
             },
             [](EngineConfig& c, const std::string& v) {
               c.forward.matmul.activations = v == "q8" ? ActivationPrecision::Q8 : ActivationPrecision::F32;
             }),
      integer({.key = "threads", .flag = "--threads", .alias = "-t", .help = "worker threads (default: all cores)",
               .lowest_means = "all cores", .timing = SettingTiming::Build, .switch_cost = kNewEngine,
               .section = section, .label = "threads", .name = "threads",
               .explanation = "Matmul worker threads."},
              0, 1024, [](const EngineConfig& c) { return int64_t{c.threads}; },
              [](EngineConfig& c, int64_t v) { c.threads = static_cast<int32_t>(v); }),
      {.key = "device", .flag = "--device",
       .help = "where the forward pass runs: cpu (default) | cuda | cuda:N (a CUDA build and device)",
       .kind = SettingKind::Device, .switch_cost = "builds the forward pass there and a new KV cache",
       .section = section, .label = "device", .name = "device",
       .explanation = "Where the model runs; a change rebuilds the forward pass there and recomputes running "
                      "requests. A device that fails sends the engine to the CPU.",
       .get = [](const EngineConfig& c) { return compute_device_name(c.device); },
       .set = [](EngineConfig& c, const std::string& v) {
         const std::optional<ComputeDevice> device = compute_device_from_name(v);
         if (!device) throw SettingError("is not a device (cpu, cuda or cuda:N)");
         c.device = *device;
       },
       .remembered = false},
  };
}

std::vector<EngineSetting> scheduler_rows() {
  const std::string section = "Scheduler";
  return {
      choice({.key = "scheduler", .flag = "--scheduler",
              .help = "continuous (default: every step admits) or static (a batch runs until its longest ends)",
              .switch_cost = kNextStep, .section = section, .label = "policy", .name = "scheduler",
              .explanation = "Continuous: requests join and leave at every step (Orca); static: a batch runs until "
                             "its longest ends.",
              .summary = [](const EngineConfig& c) { return std::string(scheduler_policy_name(c.scheduler.policy)); }},
             {"continuous", "static"},
             [](const EngineConfig& c) { return std::string(scheduler_policy_name(c.scheduler.policy)); },
             [](EngineConfig& c, const std::string& v) { c.scheduler.policy = *scheduler_policy_from_name(v); }),
      integer({.key = "max_running", .flag = "--max-running",
               .help = "requests running at once at most (default: no limit)", .lowest_means = "no limit",
               .switch_cost = kNextStep, .section = section, .label = "max running", .name = "max running",
               .explanation = "Sequences decoded together in one step at most (vLLM's max_num_seqs)."},
              0, 4096, [](const EngineConfig& c) { return int64_t{c.scheduler.max_running}; },
              [](EngineConfig& c, int64_t v) { c.scheduler.max_running = static_cast<int32_t>(v); }),
      integer({.key = "max_batch_tokens", .flag = "--max-batch-tokens",
               .help = "tokens computed per step at most; prompts go in chunks behind decodes (default: no limit; "
                       "1 = token by token)",
               .step = 64, .lowest_means = "no limit", .switch_cost = kNextStep, .section = section,
               .label = "max batch tokens", .name = "max batch tokens",
               .explanation = "Tokens computed per step at most: long prompts are prefilled in chunks so decodes keep "
                              "flowing."},
              0, 1 << 24, [](const EngineConfig& c) { return int64_t{c.scheduler.max_batch_tokens}; },
              [](EngineConfig& c, int64_t v) { c.scheduler.max_batch_tokens = static_cast<int32_t>(v); }),
  };
}

std::vector<EngineSetting> spec_rows() {
  const std::string section = "Speculative decoding";
  const auto speculating = [](const EngineConfig& c) { return c.spec.enabled(); };
  return {
      choice({.key = "spec", .flag = "--spec", .help = "speculative decoding (default none): " + spec_mode_help(),
              .switch_cost = kNewProposer, .section = section, .label = "speculation", .name = "speculation",
              .explanation = "A cheap proposer drafts tokens and the target checks them all in one pass: greedy "
                             "output stays token for token the same, only faster when drafts are accepted.",
              .summary = [](const EngineConfig& c) { return c.spec.enabled() ? describe_spec(c.spec) : std::string(); }},
             spec_mode_choices(), [](const EngineConfig& c) { return std::string(spec_mode_name(c.spec.mode)); },
             [](EngineConfig& c, const std::string& v) { c.spec.mode = *spec_mode_from_name(v); }),
      [&] {
        EngineSetting s = integer(
            {.key = "spec_k", .flag = "--spec-k",
             .help = "speculation: draft tokens per step, auto (default: chosen per sequence from its acceptance and "
                     "the measured step costs, up to 8; none where drafts would not pay) or a fixed 1-16",
             .lowest_means = "auto", .switch_cost = kNewProposer, .section = section, .label = "draft tokens k",
             .name = "draft tokens",
             .explanation = "Draft tokens per step. auto: each sequence drafts as many as its measured acceptance and "
                            "the measured cost of longer steps say will pay, up to 8, and none where drafts would "
                            "slow it down. 1-16: always up to that many.",
             .applies = speculating, .applies_when = "--spec"},
            SpecConfig::kAutoK, 16, [](const EngineConfig& c) { return int64_t{c.spec.k}; },
            [](EngineConfig& c, int64_t v) { c.spec.k = static_cast<int32_t>(v); });
        // "auto" or a number of drafts: a 0 would read as "none" to some, so it is not taken for auto.
        s.get = [](const EngineConfig& c) { return spec_k_name(c.spec.k); };
        s.set = [](EngineConfig& c, const std::string& text) {
          c.spec.k = text == "auto" ? SpecConfig::kAutoK : static_cast<int32_t>(parse_integer(text, 1, 16, ""));
        };
        return s;
      }(),
      integer({.key = "ngram_min", .flag = "--ngram-min",
               .help = "ngram speculation: the shortest match that drafts, 1-16 tokens (default 2)",
               .switch_cost = kNewProposer, .section = section, .label = "n-gram min", .name = "n-gram min",
               .explanation = "The shortest earlier match that drafts.", .applies = spec_mode_is(SpecMode::Ngram),
               .applies_when = "--spec ngram"},
              1, 16, [](const EngineConfig& c) { return int64_t{c.spec.ngram_min}; },
              [](EngineConfig& c, int64_t v) { c.spec.ngram_min = static_cast<int32_t>(v); }),
      integer({.key = "ngram_max", .flag = "--ngram-max",
               .help = "ngram speculation: the longest match compared, 1-16 tokens (default 8); a draft is no longer "
                       "than its match",
               .switch_cost = kNewProposer, .section = section, .label = "n-gram max", .name = "n-gram max",
               .explanation = "The longest match compared; a draft is no longer than its match.",
               .applies = spec_mode_is(SpecMode::Ngram), .applies_when = "--spec ngram"},
              1, 16, [](const EngineConfig& c) { return int64_t{c.spec.ngram_max}; },
              [](EngineConfig& c, int64_t v) { c.spec.ngram_max = static_cast<int32_t>(v); }),
      {.key = "draft_model", .flag = "--draft-model", .help = "draft speculation: a GGUF with the target's vocabulary",
       .kind = SettingKind::Path, .switch_cost = kNewProposer, .section = section, .label = "draft model",
       .name = "draft model", .explanation = "A GGUF model with the target's vocabulary drafts.",
       .get = [](const EngineConfig& c) { return c.spec.draft_model; },
       .set = [](EngineConfig& c, const std::string& v) { c.spec.draft_model = v; },
       .applies = spec_mode_is(SpecMode::Draft), .applies_when = "--spec draft"},
      choice({.key = "draft_quant", .flag = "--draft-quant",
              .help = "self-quant speculation: the draft's level, q4 (default) | q4_1 | q8",
              .switch_cost = kNewProposer, .section = section, .label = "draft level", .name = "draft level",
              .explanation = "The target's own weights at this level draft.",
              .applies = spec_mode_is(SpecMode::SelfQuant), .applies_when = "--spec self-quant"},
             {"q4", "q4_1", "q8"}, [](const EngineConfig& c) { return std::string(weight_quant_name(c.spec.draft_quant)); },
             [](EngineConfig& c, const std::string& v) { c.spec.draft_quant = *weight_quant_from_name(v); }),
      integer({.key = "draft_layers", .flag = "--draft-layers",
               .help = "early-exit speculation: the target's first L layers draft (1 .. layers-1)",
               .lowest_means = "not set", .switch_cost = kNewProposer, .section = section, .label = "draft layers",
               .name = "draft layers", .explanation = "The target's first layers and its output head draft.",
               .applies = spec_mode_is(SpecMode::EarlyExit), .applies_when = "--spec early-exit"},
              // Not capped at the target's layers here: the engine names the valid range when it refuses.
              0, 1 << 16, [](const EngineConfig& c) { return int64_t{c.spec.draft_layers}; },
              [](EngineConfig& c, int64_t v) { c.spec.draft_layers = static_cast<int32_t>(v); }),
      real({.key = "draft_p_min", .flag = "--draft-p-min",
            .help = "model drafts stop when their top probability falls below this, 0-1 (default 0)", .step = 0.05,
            .lowest_means = "off", .switch_cost = kNewProposer, .section = section, .label = "draft p-min",
            .name = "draft p-min",
            .explanation = "Model drafts stop once their top probability falls below this (off: always k).",
            .applies = model_draft, .applies_when = "--spec draft, self-quant or early-exit"},
           0.0, 1.0, [](const EngineConfig& c) { return c.spec.draft_p_min; },
           [](EngineConfig& c, float v) { c.spec.draft_p_min = v; }),
  };
}

std::vector<EngineSetting> all_rows() {
  std::vector<EngineSetting> rows;
  for (auto part : {kv_cache_rows, compute_rows, scheduler_rows, spec_rows}) {
    for (EngineSetting& s : part()) rows.push_back(std::move(s));
  }
  return rows;
}

}  // namespace

const std::vector<EngineSetting>& engine_settings() {
  static const std::vector<EngineSetting> rows = all_rows();
  return rows;
}

const EngineSetting* find_setting(std::string_view key) {
  for (const EngineSetting& s : engine_settings()) {
    if (s.key == key) return &s;
  }
  return nullptr;
}

std::vector<const EngineSetting*> changed_settings(const EngineConfig& a, const EngineConfig& b, bool both_apply) {
  std::vector<const EngineSetting*> changed;
  for (const EngineSetting& s : engine_settings()) {
    if (both_apply && !(s.applies_to(a) && s.applies_to(b))) continue;
    if (s.get(a) != s.get(b)) changed.push_back(&s);
  }
  return changed;
}

std::string setting_text(const EngineSetting& s, const EngineConfig& c) {
  const std::string value = s.get(c);
  return s.name + " " + (at_lowest(s, value) ? s.lowest_means : value + s.unit);
}

std::string config_summary(const EngineConfig& c) {
  std::vector<std::string> parts;
  for (const EngineSetting& s : engine_settings()) {
    if (!s.summary) continue;
    if (std::string words = s.summary(c); !words.empty()) parts.push_back(std::move(words));
  }
  return join(parts, " · ");
}

std::string build_setting_names() {
  std::vector<std::string> names;
  for (const EngineSetting& s : engine_settings()) {
    if (s.timing == SettingTiming::Build) names.push_back(s.name);
  }
  const std::string last = names.back();
  names.pop_back();
  return join(names) + " and " + last;
}

}  // namespace inferscope
