#include "core/model/model_config.h"

#include <cmath>
#include <filesystem>
#include <string>
#include <variant>

#include "core/common/text_format.h"
#include "core/gguf/gguf_file.h"

namespace inferscope {
namespace {

int32_t positive_int(const GgufFile& f, const std::string& key, int64_t value, int64_t max_value) {
  if (value <= 0 || value > max_value) {
    throw GgufError(f.path() + ": metadata " + key + ": value " + std::to_string(value) +
                    " is out of range (1.." + std::to_string(max_value) + ")");
  }
  return static_cast<int32_t>(value);
}

// rope.scaling.*: none, linear (positions divided by the factor) or YaRN (llama.cpp's derivation of
// its ramp and magnitude from the factor and the original context; rope.scaling.attn_factor scales
// cos and sin as in llama.cpp, so it is only accepted with YaRN, where the net scale is defined).
void read_rope_scaling(const GgufFile& f, const std::string& a, LlamaConfig& c) {
  const std::string scaling = f.get_string_or(a + "rope.scaling.type", "none");
  if (scaling != "none" && scaling != "linear" && scaling != "yarn") {
    throw GgufError(f.path() + ": metadata " + a + "rope.scaling.type: '" + scaling +
                    "' is not supported (supported: none, linear, yarn)");
  }
  const double attn_factor = f.get_float_or(a + "rope.scaling.attn_factor", 1.0);
  if (scaling != "yarn" && attn_factor != 1.0) {
    throw GgufError(f.path() + ": metadata " + a + "rope.scaling.attn_factor: " + std::to_string(attn_factor) +
                    " is only supported with YaRN scaling");
  }
  if (f.has(a + "rope.scaling.yarn_log_multiplier")) {
    throw GgufError(f.path() + ": metadata " + a + "rope.scaling.yarn_log_multiplier: DeepSeek's YaRN variant is not supported");
  }
  if (scaling == "none") return;
  const double factor = f.get_float(a + "rope.scaling.factor");
  if (!(factor > 0.0)) {
    throw GgufError(f.path() + ": metadata " + a + "rope.scaling.factor: " + std::to_string(factor) + " must be positive");
  }
  c.rope_freq_scale = static_cast<float>(1.0 / factor);
  if (scaling == "linear") return;
  c.rope_yarn_orig_ctx = positive_int(f, a + "rope.scaling.original_context_length",
                                      f.get_int_or(a + "rope.scaling.original_context_length", c.context_length), 1 << 30);
  if (!(attn_factor > 0.0)) {
    throw GgufError(f.path() + ": metadata " + a + "rope.scaling.attn_factor: " + std::to_string(attn_factor) +
                    " must be positive");
  }
  c.rope_yarn = rope_yarn(c.rope_dim, c.rope_freq_base, c.rope_freq_scale, c.rope_yarn_orig_ctx,
                          static_cast<float>(attn_factor));
}

}  // namespace

LlamaConfig LlamaConfig::from_gguf(const GgufFile& f) {
  LlamaConfig c;
  c.architecture = f.get_string("general.architecture");
  const ArchitectureTraits* traits = find_architecture(c.architecture);
  if (traits == nullptr) {
    throw GgufError(f.path() + ": metadata general.architecture: '" + c.architecture + "' is not supported (supported: " +
                    supported_architectures() + ")");
  }
  c.traits = *traits;
  const std::string a = c.architecture + ".";
  c.name = std::filesystem::path(f.path()).stem().string();
  c.name_in_file = f.get_string_or("general.name", "");
  c.n_layers = positive_int(f, a + "block_count", f.get_int(a + "block_count"), 1024);
  c.dim = positive_int(f, a + "embedding_length", f.get_int(a + "embedding_length"), 1 << 16);
  c.n_heads = positive_int(f, a + "attention.head_count", f.get_int(a + "attention.head_count"), 1024);
  // llama.cpp: head_count_kv defaults to head_count (plain multi-head attention).
  c.n_kv_heads = positive_int(f, a + "attention.head_count_kv",
                              f.get_int_or(a + "attention.head_count_kv", c.n_heads), c.n_heads);
  c.ffn_dim = positive_int(f, a + "feed_forward_length", f.get_int(a + "feed_forward_length"), 1 << 18);
  c.context_length = positive_int(f, a + "context_length", f.get_int(a + "context_length"), 1 << 24);
  if (c.n_heads % c.n_kv_heads != 0) {
    throw GgufError(f.path() + ": metadata " + a + "attention.head_count_kv: " + std::to_string(c.n_kv_heads) +
                    " does not divide head_count " + std::to_string(c.n_heads));
  }
  // The head size: attention.key_length where the file sets it (Qwen3: 16 heads of 128 over 1024),
  // else embedding / heads. Values as wide as keys are all the attention here computes.
  if (f.find(a + "attention.key_length") != nullptr) {
    c.head_dim = positive_int(f, a + "attention.key_length", f.get_int(a + "attention.key_length"), 1 << 12);
    const int64_t value_length = f.get_int_or(a + "attention.value_length", c.head_dim);
    if (value_length != c.head_dim) {
      throw GgufError(f.path() + ": metadata " + a + "attention.value_length: " + std::to_string(value_length) +
                      " differs from key_length " + std::to_string(c.head_dim) + " (not supported)");
    }
    c.head_dim_from_key_length = int64_t{c.head_dim} * c.n_heads != c.dim;
  } else {
    if (c.dim % c.n_heads != 0) {
      throw GgufError(f.path() + ": metadata " + a + "embedding_length: " + std::to_string(c.dim) +
                      " is not a multiple of head_count " + std::to_string(c.n_heads));
    }
    c.head_dim = c.dim / c.n_heads;
  }
  // llama.cpp defaults: rope over the whole head, base 10000, eps 1e-5.
  c.rope_dim = positive_int(f, a + "rope.dimension_count", f.get_int_or(a + "rope.dimension_count", c.head_dim),
                            c.head_dim);
  if (c.rope_dim % 2 != 0) {
    throw GgufError(f.path() + ": metadata " + a + "rope.dimension_count: " + std::to_string(c.rope_dim) + " is odd");
  }
  c.rope_freq_base = static_cast<float>(f.get_float_or(a + "rope.freq_base", 10000.0));
  c.rms_eps = static_cast<float>(f.get_float_or(a + "attention.layer_norm_rms_epsilon", 1e-5));
  if (!(c.rope_freq_base > 0.0f) || !(c.rms_eps > 0.0f)) {
    throw GgufError(f.path() + ": metadata " + a + "rope.freq_base / layer_norm_rms_epsilon must be positive");
  }
  read_rope_scaling(f, a, c);
  // A key `sliding_window` or more positions before its query is masked (llama.cpp's standard SWA).
  c.sliding_window = static_cast<int32_t>(f.get_int_or(a + "attention.sliding_window", 0));
  if (c.sliding_window < 0) {
    throw GgufError(f.path() + ": metadata " + a + "attention.sliding_window: " + std::to_string(c.sliding_window) +
                    " is negative");
  }
  if (c.sliding_window > 0 && c.traits.swa_pattern > 0) {
    // Local layers (llama.cpp's set_swa_pattern): all but every n-th, or as the file lists them.
    const GgufValue* pattern = f.find(a + "attention.sliding_window_pattern");
    if (pattern != nullptr && std::holds_alternative<GgufArray>(pattern->v)) {
      const GgufArray& flags = pattern->as_array();
      if (flags.items.size() != static_cast<size_t>(c.n_layers)) {
        throw GgufError(f.path() + ": metadata " + a + "attention.sliding_window_pattern: " +
                        std::to_string(flags.items.size()) + " flags for " + std::to_string(c.n_layers) + " layers");
      }
      for (const GgufValue& flag : flags.items) c.local_layers.push_back(flag.as_bool());
    } else {
      const int64_t n = pattern != nullptr ? pattern->as_int() : c.traits.swa_pattern;
      for (int32_t l = 0; l < c.n_layers; ++l) c.local_layers.push_back(n == 0 || l % n < n - 1);
    }
    c.rope_freq_base_local = static_cast<float>(f.get_float_or(a + "rope.freq_base_swa", 10000.0));
  }
  // gemma_pytorch's query_pre_attn_scalar: dim / heads for the 62-layer (27B) Gemma 3, the head size
  // otherwise (which is what attention divides by already).
  if (c.architecture == "gemma3" && c.n_layers == 62) {
    c.query_scale = std::sqrt(static_cast<float>(c.head_dim)) / std::sqrt(static_cast<float>(c.dim / c.n_heads));
  }
  c.final_logit_softcap = static_cast<float>(f.get_float_or(a + "final_logit_softcapping", 0.0));
  for (const char* name : {"rope_factors_long.weight", "rope_factors_short.weight"}) {
    if (f.find_tensor(name) != nullptr) {
      throw GgufError(f.path() + ": tensor '" + std::string(name) + "': LongRoPE scaling (Phi-3 128k) is not supported");
    }
  }
  // Llama 3.1+ frequency factors: the converter bakes the "llama3" scaling into rope_freqs.weight.
  c.rope_freq_factors = f.find_tensor("rope_freqs.weight") != nullptr;
  if (c.rope_freq_factors && !c.traits.rope_freq_factors) {
    throw GgufError(f.path() + ": tensor 'rope_freqs.weight': RoPE frequency factors are not supported for " +
                    c.architecture);
  }
  const GgufTensorInfo& embd = f.tensor("token_embd.weight");
  if (embd.dims.size() != 2 || embd.dims[0] != c.dim) {
    throw GgufError(f.path() + ": tensor 'token_embd.weight': shape does not match embedding_length " +
                    std::to_string(c.dim));
  }
  c.vocab_size = positive_int(f, "token_embd.weight rows", embd.dims[1], 1 << 24);
  c.tied_output = f.find_tensor("output.weight") == nullptr;
  return c;
}

int32_t LlamaConfig::layer_window(int32_t layer) const {
  if (!local_layers.empty() && !local_layers[static_cast<size_t>(layer)]) return 0;
  return sliding_window;
}

int32_t LlamaConfig::windowed_layers() const {
  int32_t n = 0;
  for (int32_t l = 0; l < n_layers; ++l) n += layer_window(l) > 0 ? 1 : 0;
  return n;
}

std::vector<std::string> LlamaConfig::differences() const {
  std::vector<std::string> lines = architecture_differences(traits);
  if (rope_freq_factors) lines.push_back("RoPE frequencies divided by per-pair factors (rope_freqs.weight, Llama 3.1+)");
  if (head_dim_from_key_length) lines.push_back("head size from attention.key_length, not embedding / heads");
  if (rope_yarn) {
    lines.push_back("YaRN RoPE scaling: x" + format_number(1.0 / rope_freq_scale, "%g") + " over " +
                    std::to_string(rope_yarn_orig_ctx) + " trained positions; pairs " +
                    format_number(rope_yarn->corr_low, "%g") + ".." + format_number(rope_yarn->corr_high, "%g") +
                    " blend original and interpolated angles; cos/sin x" + format_number(rope_yarn->mscale, "%.4f"));
  }
  const int32_t windowed = windowed_layers();
  if (windowed > 0) {
    std::string line = std::to_string(windowed) + " of " + std::to_string(n_layers) +
                       " layers local: sliding window of " + std::to_string(sliding_window) + " tokens";
    if (!local_layers.empty()) line += ", RoPE base " + format_number(rope_freq_base_local, "%g");
    if (windowed < n_layers) line += "; the rest global (RoPE base " + format_number(rope_freq_base, "%g") + ")";
    lines.push_back(line);
  }
  if (query_scale != 1.0f) lines.push_back("queries scaled by " + format_number(query_scale, "%g") + " before attention");
  if (final_logit_softcap > 0) lines.push_back("logits soft-capped at " + format_number(final_logit_softcap, "%g"));
  return lines;
}

}  // namespace inferscope
