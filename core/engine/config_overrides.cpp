#include "core/engine/config_overrides.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/common/json_field.h"
#include "core/kv/kv_dtype.h"

namespace inferscope {
namespace {

// "auto" or a number of drafts; a number may come as text (settings files keep text only).
int32_t spec_k_of(const nlohmann::json& v, const std::string& where) {
  if (v == "auto") return SpecConfig::kAutoK;
  if (v.is_string()) {
    const std::string text = v.get<std::string>();
    if (!text.empty() && text.size() <= 9 && text.find_first_not_of("0123456789") == std::string::npos) return std::stoi(text);
    throw std::runtime_error(where + ": 'spec_k' must be \"auto\" or a number of draft tokens, not " + v.dump());
  }
  return json_field<int32_t>(nlohmann::json{{"spec_k", v}}, "spec_k", where);
}

// One speculative-decoding key of a "config" object into `spec`; false when `key` is not one.
bool apply_spec_override(SpecConfig& spec, const std::string& key, const nlohmann::json& o, const std::string& w,
                         const PathResolver& resolve) {
  if (key == "spec") {
    const auto mode = spec_mode_from_name(json_field<std::string>(o, "spec", w));
    if (!mode) throw std::runtime_error(w + ": 'spec' must be one of " + spec_mode_names() + ", not " + o.at(key).dump());
    spec.mode = *mode;
  } else if (key == "spec_k") {
    spec.k = spec_k_of(o.at(key), w);
  } else if (key == "ngram_min") {
    spec.ngram_min = json_field<int32_t>(o, "ngram_min", w);
  } else if (key == "ngram_max") {
    spec.ngram_max = json_field<int32_t>(o, "ngram_max", w);
  } else if (key == "draft_model") {
    const std::string path = json_field<std::string>(o, "draft_model", w);
    spec.draft_model = resolve ? resolve(path) : path;
  } else if (key == "draft_quant") {
    const auto level = weight_quant_from_name(json_field<std::string>(o, "draft_quant", w));
    if (!level) throw std::runtime_error(w + ": 'draft_quant' must be one of " + weight_quant_names() + ", not " + o.at(key).dump());
    spec.draft_quant = *level;
  } else if (key == "draft_layers") {
    spec.draft_layers = json_field<int32_t>(o, "draft_layers", w);
  } else if (key == "draft_p_min") {
    spec.draft_p_min = json_field<float>(o, "draft_p_min", w);
  } else {
    return false;
  }
  return true;
}

}  // namespace

EngineConfig apply_config_overrides(EngineConfig c, const nlohmann::json& o, const std::string& where, const PathResolver& resolve) {
  if (!o.is_object()) throw std::runtime_error(where + ": 'config' must be an object");
  for (const auto& [key, value] : o.items()) {
    const std::string w = where + ": config";
    if (key == "kv") {
      const auto kind = kv_kind_from_name(json_field<std::string>(o, "kv", w));
      if (!kind) throw std::runtime_error(w + ": 'kv' must be \"paged\" or \"contiguous\", not " + value.dump());
      c.kv.kind = *kind;
    } else if (key == "block_size") {
      c.kv.block_size = json_field<int32_t>(o, "block_size", w);
    } else if (key == "kv_budget_mib") {
      c.kv.budget_bytes = json_field<size_t>(o, "kv_budget_mib", w) << 20;
    } else if (key == "context") {
      c.context_length = json_field<int32_t>(o, "context", w);
      c.kv.max_seq_len = 0;
    } else if (key == "prefix_cache") {
      c.kv.prefix_cache = json_field<bool>(o, "prefix_cache", w);
    } else if (key == "attention") {
      c.attention = json_field<std::string>(o, "attention", w);
    } else if (key == "kv_dtype") {
      const auto dtype = kv_dtype_from_name(json_field<std::string>(o, "kv_dtype", w));
      if (!dtype) throw std::runtime_error(w + ": 'kv_dtype' must be \"f32\", \"f16\" or \"q8\", not " + value.dump());
      c.kv_dtype = *dtype;
    } else if (key == "quant") {
      const auto level = weight_quant_from_name(json_field<std::string>(o, "quant", w));
      if (!level) throw std::runtime_error(w + ": 'quant' must be one of " + weight_quant_names() + ", not " + value.dump());
      c.quant = *level;
    } else if (key == "scheduler") {
      const auto policy = scheduler_policy_from_name(json_field<std::string>(o, "scheduler", w));
      if (!policy) throw std::runtime_error(w + ": 'scheduler' must be \"continuous\" or \"static\", not " + value.dump());
      c.scheduler.policy = *policy;
    } else if (key == "max_running") {
      c.scheduler.max_running = json_field<int32_t>(o, "max_running", w);
    } else if (key == "max_batch_tokens") {
      c.scheduler.max_batch_tokens = json_field<int32_t>(o, "max_batch_tokens", w);
    } else if (key == "fuse") {
      c.forward.matmul.fuse = json_field<bool>(o, "fuse", w);
    } else if (key == "device") {
      const auto device = compute_device_from_name(json_field<std::string>(o, "device", w));
      if (!device) throw std::runtime_error(w + ": 'device' must be \"cpu\", \"cuda\" or \"cuda:N\", not " + value.dump());
      c.device = *device;
    } else if (key == "threads") {
      c.threads = json_field<int32_t>(o, "threads", w);
    } else if (!apply_spec_override(c.spec, key, o, w, resolve)) {
      throw std::runtime_error(w + ": unknown toggle '" + key + "'");
    }
  }
  return c;
}

nlohmann::json config_overrides_of(const EngineConfig& c) {
  return {{"kv", kv_kind_name(c.kv.kind)},
          {"block_size", c.kv.block_size},
          {"kv_budget_mib", c.kv.budget_bytes >> 20},
          {"context", c.context_length},
          {"prefix_cache", c.kv.prefix_cache},
          {"attention", c.attention},
          {"kv_dtype", kv_dtype_name(c.kv_dtype)},
          {"quant", weight_quant_name(c.quant)},
          {"scheduler", scheduler_policy_name(c.scheduler.policy)},
          {"max_running", c.scheduler.max_running},
          {"max_batch_tokens", c.scheduler.max_batch_tokens},
          {"fuse", c.forward.matmul.fuse},
          {"threads", c.threads},
          {"device", compute_device_name(c.device)},
          {"spec", spec_mode_name(c.spec.mode)},
          {"spec_k", c.spec.auto_k() ? nlohmann::json("auto") : nlohmann::json(c.spec.k)},
          {"ngram_min", c.spec.ngram_min},
          {"ngram_max", c.spec.ngram_max},
          {"draft_model", c.spec.draft_model},
          {"draft_quant", weight_quant_name(c.spec.draft_quant)},
          {"draft_layers", c.spec.draft_layers},
          {"draft_p_min", c.spec.draft_p_min}};
}

}  // namespace inferscope
