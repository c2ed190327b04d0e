// inferscope-cli inspect: what a model file holds and what its KV cache will cost.
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/cli/commands.h"
#include "core/kv/kv_dtype.h"
#include "core/cli/model_options.h"
#include "core/gguf/gguf_file.h"

namespace inferscope::cli {
namespace {

nlohmann::json describe(const LlamaModel& model, DType kv_dtype, int64_t batch) {
  const LlamaConfig& c = model.config();
  const Vocab& v = model.tokenizer().vocab();
  const KvGeometry kv = model.kv_geometry(kv_dtype);
  nlohmann::json j;
  j["file"] = model.file().path();
  j["gguf_version"] = model.file().version();
  j["architecture"] = c.architecture;
  j["differs_from_llama"] = c.differences();
  j["name"] = c.name;
  j["name_in_file"] = c.name_in_file;
  j["hyperparameters"] = {{"n_layers", c.n_layers},         {"dim", c.dim},
                          {"n_heads", c.n_heads},           {"n_kv_heads", c.n_kv_heads},
                          {"head_dim", c.head_dim},         {"ffn_dim", c.ffn_dim},
                          {"vocab_size", c.vocab_size},     {"context_length", c.context_length},
                          {"rope_dim", c.rope_dim},         {"rope_freq_base", c.rope_freq_base},
                          {"rope_freq_scale", c.rope_freq_scale}, {"rms_eps", c.rms_eps},
                          {"tied_output", c.tied_output}};
  j["parameters"] = model.parameter_count();
  j["weight_bytes"] = model.weights().matrix_bytes();
  nlohmann::json tensors = nlohmann::json::array();
  for (const GgufTensorInfo& t : model.file().tensors()) {
    tensors.push_back({{"name", t.name}, {"type", dtype_name(t.type)}, {"dims", t.dims}, {"bytes", t.n_bytes}});
  }
  j["tensors"] = tensors;
  j["tokenizer"] = {{"model", v.model}, {"pre", v.pre},           {"size", v.size()},
                    {"bos", v.bos},     {"eos", v.eos},           {"unk", v.unk},
                    {"pad", v.pad},     {"eot", v.eot},           {"add_bos", v.add_bos},
                    {"add_space_prefix", v.add_space_prefix}};
  j["chat_template"] = chat_family_name(model.chat_template().family);
  const size_t per_token = kv.bytes_per_token();
  j["kv_cache"] = {{"dtype", kv_dtype_name(kv_dtype)},
                   {"bytes_per_token", per_token},
                   {"batch", batch},
                   {"context_length", c.context_length},
                   {"bytes_full_context", per_token * static_cast<size_t>(c.context_length) * static_cast<size_t>(batch)},
                   {"formula", "2 x bytes_per_element x n_layers x n_kv_heads x head_dim x seq_len x batch (q8: 34 bytes per 32 elements)"}};
  return j;
}

std::string mib(double bytes) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(2) << bytes / (1024.0 * 1024.0) << " MiB";
  return s.str();
}

void print_text(const nlohmann::json& j) {
  std::cout << "file            " << j["file"].get<std::string>() << " (GGUF v" << j["gguf_version"] << ")\n";
  std::cout << "architecture    " << j["architecture"].get<std::string>();
  if (!j["name_in_file"].get<std::string>().empty()) std::cout << "  name in the file: " << j["name_in_file"].get<std::string>();
  std::cout << "\n";
  for (const auto& line : j["differs_from_llama"]) std::cout << "  differs from Llama: " << line.get<std::string>() << "\n";
  std::cout << "parameters      " << j["parameters"] << "  weights " << mib(j["weight_bytes"].get<double>()) << "\n";
  for (const auto& [k, val] : j["hyperparameters"].items()) {
    std::cout << "  " << std::left << std::setw(18) << k << val.dump() << "\n";
  }
  const auto& t = j["tokenizer"];
  std::cout << "tokenizer       " << t["model"].get<std::string>() << " (pre: " << t["pre"].get<std::string>()
            << "), " << t["size"] << " tokens, bos " << t["bos"] << ", eos " << t["eos"] << ", eot " << t["eot"]
            << ", add_bos " << t["add_bos"] << "\n";
  std::cout << "chat template   " << j["chat_template"].get<std::string>() << "\n";
  const auto& kv = j["kv_cache"];
  std::cout << "KV cache        " << kv["dtype"].get<std::string>() << ": " << kv["bytes_per_token"]
            << " bytes/token; " << mib(kv["bytes_full_context"].get<double>()) << " for " << kv["context_length"]
            << " tokens x batch " << kv["batch"] << "\n";
  std::cout << "tensors (" << j["tensors"].size() << "):\n";
  for (const auto& tensor : j["tensors"]) {
    std::cout << "  " << std::left << std::setw(28) << tensor["name"].get<std::string>() << std::setw(6)
              << tensor["type"].get<std::string>() << std::setw(16) << tensor["dims"].dump() << tensor["bytes"]
              << "\n";
  }
}

}  // namespace

int cmd_inspect(int argc, char** argv) {
  std::vector<OptionSpec> specs = with_model_options({
      {"--batch", "", true, "sequences for the full-context KV size (default 1)"},
      {"--json", "", false, "print JSON"},
  });
  if (print_help_if_asked("inspect --model PATH [--batch N] [--kv-dtype f16|f32|q8] [--json]", specs, argc, argv)) {
    return 0;
  }
  const Args args(specs, argc, argv, 2);
  const int64_t batch = args.integer("--batch", 1, 1, 1 << 20);
  const EngineConfig config = engine_config(args);
  auto model = load_model(args);
  const nlohmann::json j = describe(*model, config.kv_dtype, batch);
  if (args.has("--json")) {
    std::cout << j.dump(2) << "\n";
  } else {
    print_text(j);
  }
  return 0;
}

}  // namespace inferscope::cli
