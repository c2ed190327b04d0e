#include "core/learn/experiment.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "core/common/file_bytes.h"
#include "core/common/json_field.h"
#include "core/common/text_format.h"
#include "core/engine/config_overrides.h"

namespace inferscope {
namespace {

std::vector<std::string> strings(const nlohmann::json& root, const char* key, const std::string& where) {
  if (!root.contains(key)) return {};
  return json_field<std::vector<std::string>>(root, key, where);
}

std::string resolve(const std::string& path, const std::string& root) {
  if (std::filesystem::exists(path) || root.empty()) return path;
  return (std::filesystem::path(root) / path).string();
}

ExperimentRun parse_run(const nlohmann::json& r, const std::string& where, const std::string& root) {
  if (!r.is_object()) throw std::runtime_error(where + " must be an object");
  for (const auto& [key, value] : r.items()) {
    if (key != "name" && key != "config" && key != "workload") throw std::runtime_error(where + ": unknown field '" + key + "'");
  }
  ExperimentRun run;
  run.name = json_field<std::string>(r, "name", where);
  const bool name_ok = !run.name.empty() && std::all_of(run.name.begin(), run.name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
  if (!name_ok) throw std::runtime_error(where + ": 'name' must be letters, digits and '_', not \"" + run.name + "\"");
  if (r.contains("config")) {
    run.config = r["config"];
    nlohmann::json toggles = run.config;
    // kv_budget_tokens is the experiment's own toggle (a budget in tokens of the model's K/V).
    if (toggles.is_object() && toggles.erase("kv_budget_tokens") > 0) json_field<size_t>(run.config, "kv_budget_tokens", where + ": config");
    apply_config_overrides({}, toggles, where);  // checks every toggle now
  }
  if (!r.contains("workload")) throw std::runtime_error(where + ": field 'workload' is missing");
  const nlohmann::json& w = r["workload"];
  if (w.is_string()) {
    run.workload_source = resolve(w.get<std::string>(), root);
    run.workload = load_workload(run.workload_source);
  } else {
    run.workload_source = "inline";
    run.workload = parse_workload(w, where + ": workload");
  }
  return run;
}

ExperimentPerplexity parse_perplexity(const nlohmann::json& p, const std::string& where, const std::string& root) {
  if (!p.is_object()) throw std::runtime_error(where + " must be an object");
  ExperimentPerplexity out;
  out.source = resolve(json_field<std::string>(p, "text", where), root);
  if (p.contains("ctx")) out.ctx = json_field<int64_t>(p, "ctx", where);
  if (out.ctx < 2) throw std::runtime_error(where + ": 'ctx' must be at least 2, not " + std::to_string(out.ctx));
  std::optional<std::string> text = read_file_bytes(out.source);
  if (!text) throw std::runtime_error(where + ": cannot read the text " + out.source);
  out.text = std::move(*text);
  if (out.text.empty()) throw std::runtime_error(where + ": the text " + out.source + " is empty");
  return out;
}

ExperimentAttentionSweep parse_sweep(const nlohmann::json& s, const std::string& where) {
  if (!s.is_object()) throw std::runtime_error(where + " must be an object");
  ExperimentAttentionSweep out;
  out.contexts = json_field<std::vector<int32_t>>(s, "contexts", where);
  if (out.contexts.empty()) throw std::runtime_error(where + ": 'contexts' must name at least one context");
  for (size_t i = 0; i < out.contexts.size(); ++i) {
    if (out.contexts[i] < 1 || (i > 0 && out.contexts[i] <= out.contexts[i - 1])) {
      throw std::runtime_error(where + ": 'contexts' must be positive and ascending; " +
                               std::to_string(out.contexts[i]) + " at index " + std::to_string(i) + " is not");
    }
  }
  if (s.contains("repeats")) out.repeats = json_field<int32_t>(s, "repeats", where);
  if (out.repeats < 1) throw std::runtime_error(where + ": 'repeats' must be at least 1, not " + std::to_string(out.repeats));
  return out;
}

}  // namespace

const std::vector<std::string>& experiment_plot_kinds() {
  static const std::vector<std::string> kinds = {"timeline", "roofline",        "kv_blocks",   "steps",     "bars",
                                                 "kv_token", "prefix_hits",     "attention_sweep", "spec_tokens", "acceptance"};
  return kinds;
}

Experiment Experiment::parse(const nlohmann::json& root, const std::string& source, const std::string& resource_root) {
  if (!root.is_object()) throw std::runtime_error(source + ": expected an object");
  static const std::vector<std::string> fields = {"title",     "question",    "explain", "look_at",    "runs",
                                                  "values",    "narration",   "conclusions", "plots", "perplexity",
                                                  "attention_sweep"};
  for (const auto& [key, value] : root.items()) {
    if (std::find(fields.begin(), fields.end(), key) == fields.end()) throw std::runtime_error(source + ": unknown field '" + key + "'");
  }
  Experiment e;
  e.id = std::filesystem::path(source).stem().string();
  e.title = json_field<std::string>(root, "title", source);
  e.question = root.contains("question") ? json_field<std::string>(root, "question", source) : "";
  e.look_at = root.contains("look_at") ? json_field<std::string>(root, "look_at", source) : "";
  e.explain = strings(root, "explain", source);
  e.narration = strings(root, "narration", source);
  if (!root.contains("runs") || !root["runs"].is_array() || root["runs"].empty()) {
    throw std::runtime_error(source + ": 'runs' must be a non-empty array");
  }
  for (size_t i = 0; i < root["runs"].size(); ++i) {
    ExperimentRun run = parse_run(root["runs"][i], source + ": runs[" + std::to_string(i) + "]", resource_root);
    for (const ExperimentRun& other : e.runs) {
      if (other.name == run.name) throw std::runtime_error(source + ": two runs are named \"" + run.name + "\"");
    }
    e.runs.push_back(std::move(run));
  }
  if (root.contains("values")) {
    if (!root["values"].is_object()) throw std::runtime_error(source + ": 'values' must be an object of expressions");
    // nlohmann::json sorts object keys; the file's order matters (a value may use earlier ones), so
    // derived values are evaluated until none is left that can be (experiment_values.h).
    for (const auto& [name, expression] : root["values"].items()) {
      e.values.emplace_back(name, json_field<std::string>(root["values"], name.c_str(), source + ": values"));
    }
  }
  if (root.contains("conclusions")) {
    if (!root["conclusions"].is_array()) throw std::runtime_error(source + ": 'conclusions' must be an array");
    for (size_t i = 0; i < root["conclusions"].size(); ++i) {
      const nlohmann::json& c = root["conclusions"][i];
      const std::string w = source + ": conclusions[" + std::to_string(i) + "]";
      if (c.is_object() && c.contains("otherwise")) {
        e.conclusions.push_back({"", json_field<std::string>(c, "otherwise", w)});
      } else {
        e.conclusions.push_back({json_field<std::string>(c, "if", w), json_field<std::string>(c, "then", w)});
      }
    }
  }
  if (root.contains("plots")) {
    if (!root["plots"].is_array()) throw std::runtime_error(source + ": 'plots' must be an array");
    for (size_t i = 0; i < root["plots"].size(); ++i) {
      const nlohmann::json& p = root["plots"][i];
      const std::string w = source + ": plots[" + std::to_string(i) + "]";
      ExperimentPlot plot{json_field<std::string>(p, "plot", w), strings(p, "runs", w), "", ""};
      if (plot.kind == "bars") {
        plot.value = json_field<std::string>(p, "value", w);
        plot.title = json_field<std::string>(p, "title", w);
      }
      const auto& kinds = experiment_plot_kinds();
      if (std::find(kinds.begin(), kinds.end(), plot.kind) == kinds.end()) {
        throw std::runtime_error(w + ": unknown plot \"" + plot.kind + "\" (" + join(kinds) + ")");
      }
      for (const std::string& name : plot.runs) {
        const bool known = std::any_of(e.runs.begin(), e.runs.end(), [&](const ExperimentRun& r) { return r.name == name; });
        if (!known) throw std::runtime_error(w + ": no run named \"" + name + "\"");
      }
      e.plots.push_back(std::move(plot));
    }
  }
  if (root.contains("perplexity")) e.perplexity = parse_perplexity(root["perplexity"], source + ": perplexity", resource_root);
  if (root.contains("attention_sweep")) e.attention_sweep = parse_sweep(root["attention_sweep"], source + ": attention_sweep");
  for (const ExperimentPlot& plot : e.plots) {
    if (plot.kind == "attention_sweep" && !e.attention_sweep) {
      throw std::runtime_error(source + ": a plot \"attention_sweep\" needs the experiment's 'attention_sweep'");
    }
  }
  return e;
}

Experiment Experiment::parse_text(std::string_view text, const std::string& source, const std::string& resource_root) {
  return parse(parse_json_text(text, source), source, resource_root);
}

Experiment Experiment::load(const std::string& path) {
  const std::optional<std::string> text = read_file_bytes(path);
  if (!text) throw std::runtime_error(path + ": cannot open the experiment");
  const std::filesystem::path resources = std::filesystem::absolute(path).parent_path().parent_path();
  return parse_text(*text, path, resources.parent_path().string());
}

}  // namespace inferscope
