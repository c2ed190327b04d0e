// Every engine setting, declared once. A row holds the setting's JSON key and command-line flag, its
// type, choices and range, whether it is fixed when an engine is built or switches between steps
// (and what a switch costs), and how the Config panel and Compare show it. The command line, JSON
// configs, the workbench's stored settings, the session files, describe_change, the Config panel and
// Compare's editors all walk this table: a new setting is one row here plus its effect in the engine.
#pragma once
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/engine/engine_config.h"

namespace inferscope {

// How a value is written and edited: a combo box, a spin box, a check box (on/off), a file, or the
// device (its choices are the devices found at run time).
enum class SettingKind { Choice, Integer, Real, Switch, Path, Device };

// When a new value takes effect: a new engine, or the next step of the running one.
enum class SettingTiming { Build, Step };

// A value a setting refuses; what() says why ("is not one of f32, f16, q8"), to follow the value.
class SettingError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct EngineSetting {
  std::string key{};    // JSON configs, stored settings and widget names: "kv_dtype"
  std::string flag{};   // the command line: "--kv-dtype"
  std::string alias{};  // a short flag ("-c") or ""
  std::string help{};   // the command line's help, with the default
  SettingKind kind = SettingKind::Choice;
  std::vector<std::string> choices{};  // Choice: every value, in display order
  double min = 0, max = 0, step = 1;  // Integer and Real
  std::string lowest_means{};  // Integer and Real: what the minimum stands for ("auto", "no limit"), or ""
  std::string unit{};          // after a number: " MiB"
  SettingTiming timing = SettingTiming::Step;
  std::string switch_cost{};   // what a change costs the running engine
  std::string section{};       // the Config panel's group: "KV cache", "Compute", "Scheduler", "Speculative decoding"
  std::string label{};         // the Config panel's label, under its section: "block size"
  std::string name{};          // the setting out of context (change notes, Compare): "KV budget"
  std::string explanation{};   // the Config panel's line on what it changes
  std::string switch_text{};   // Switch: the check box's text
  std::function<std::string(const EngineConfig&)> get{};  // the value as text, as set() reads it
  // Parses and applies `text`; throws SettingError.
  std::function<void(EngineConfig&, const std::string& text)> set{};
  std::function<bool(const EngineConfig&)> applies{};  // whether it means anything in a config (empty: always)
  std::string applies_when{};  // what applies() needs, for errors: "--spec ngram"
  // Its words in a one-line summary of a config ("paged 16", "weights q8"; "" or empty: left out).
  std::function<std::string(const EngineConfig&)> summary{};
  bool remembered = true;    // kept between workbench runs (the device is chosen each run)

  bool applies_to(const EngineConfig& c) const { return !applies || applies(c); }
};

// Every setting, in the Config panel's order.
const std::vector<EngineSetting>& engine_settings();
// The setting with `key`; nullptr when there is none.
const EngineSetting* find_setting(std::string_view key);

// The settings whose text differs between `a` and `b`, in table order. `both_apply`: only those that
// mean something in both.
std::vector<const EngineSetting*> changed_settings(const EngineConfig& a, const EngineConfig& b, bool both_apply = false);
// "NAME VALUE" for `config`: "KV dtype q8", "KV budget 64 MiB".
std::string setting_text(const EngineSetting& setting, const EngineConfig& config);
// The settings fixed when an engine is built ("threads, operator fusion and activations").
std::string build_setting_names();
// The config in a few words, for window titles, reply stats and Compare's labels:
// "paged 16 · 128 MiB · prefix cache · KV f16 · flash · weights q8 · continuous".
std::string config_summary(const EngineConfig& config);

}  // namespace inferscope
