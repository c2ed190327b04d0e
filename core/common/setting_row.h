// One setting of a config struct, declared beside the struct's fields: its JSON key and command-line
// flag, its type, choices and range, whether it is fixed when an engine is built or switches between
// steps (and what a switch costs), and how the Config panel and Compare show it. Each config struct
// (KvConfig, ForwardOptions, SchedulerConfig, SpecConfig, EngineConfig) lists its own rows in its own
// file pair; the engine's table (core/engine/setting_table.h) lifts them onto EngineConfig.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/common/text_format.h"

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

// What a switch costs the running engine, said the same way by every table.
inline const std::string kSwitchNewCache = "a new KV cache: running requests are preempted and recomputed";
inline const std::string kSwitchNextStep = "none: the next step uses it";
inline const std::string kSwitchNewEngine = "a new engine, built once no request runs";
inline const std::string kSwitchNewProposer =
    "a new proposer; a draft with a KV cache of its own shares the budget anew";

// `text` as a whole number in lo..hi; `lowest_means` (when given) stands for lo. Throws SettingError.
int64_t parse_setting_integer(const std::string& text, int64_t lo, int64_t hi, const std::string& lowest_means);
// `text` as a number in lo..hi. Throws SettingError.
float parse_setting_real(const std::string& text, double lo, double hi);
// The shortest text that reads back as `value`.
std::string setting_real_text(float value);

template <typename Config>
struct SettingRow {
  template <typename T>
  using Read = std::function<T(const Config&)>;
  template <typename T>
  using Write = std::function<void(Config&, T)>;

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
  Read<std::string> get{};     // the value as text, as set() reads it
  // Parses and applies `text`; throws SettingError.
  std::function<void(Config&, const std::string& text)> set{};
  Read<bool> applies{};         // whether it means anything in a config (empty: always)
  std::string applies_when{};  // what applies() needs, for errors: "--spec ngram"
  // Its words in a one-line summary of a config ("paged 16", "weights q8"; "" or empty: left out).
  Read<std::string> summary{};
  bool remembered = true;      // kept between workbench runs (the device is chosen each run)

  bool applies_to(const Config& c) const { return !applies || applies(c); }

  // A choice among `choices`, read and written as text.
  static SettingRow choice(SettingRow s, std::vector<std::string> choices, Read<std::string> get,
                           Write<const std::string&> assign) {
    s.kind = SettingKind::Choice;
    s.choices = choices;
    s.get = std::move(get);
    s.set = [choices = std::move(choices), assign = std::move(assign)](Config& c, const std::string& text) {
      if (std::find(choices.begin(), choices.end(), text) == choices.end()) {
        throw SettingError("is not one of " + join(choices));
      }
      assign(c, text);
    };
    return s;
  }

  // A whole number in lo..hi; s.lowest_means (when given) is read as lo.
  static SettingRow integer(SettingRow s, int64_t lo, int64_t hi, Read<int64_t> get, Write<int64_t> assign) {
    s.kind = SettingKind::Integer;
    s.min = static_cast<double>(lo);
    s.max = static_cast<double>(hi);
    s.get = [get = std::move(get)](const Config& c) { return std::to_string(get(c)); };
    s.set = [lo, hi, word = s.lowest_means, assign = std::move(assign)](Config& c, const std::string& text) {
      assign(c, parse_setting_integer(text, lo, hi, word));
    };
    return s;
  }

  // A number in lo..hi; s.lowest_means (when given) is read as lo.
  static SettingRow real(SettingRow s, double lo, double hi, Read<float> get, Write<float> assign) {
    s.kind = SettingKind::Real;
    s.min = lo;
    s.max = hi;
    s.get = [get = std::move(get)](const Config& c) { return setting_real_text(get(c)); };
    s.set = [lo, hi, word = s.lowest_means, assign = std::move(assign)](Config& c, const std::string& text) {
      assign(c, !word.empty() && text == word ? static_cast<float>(lo) : parse_setting_real(text, lo, hi));
    };
    return s;
  }

  // On or off.
  static SettingRow on_off(SettingRow s, Read<bool> get, Write<bool> assign) {
    s.kind = SettingKind::Switch;
    s.get = [get = std::move(get)](const Config& c) { return std::string(get(c) ? "on" : "off"); };
    s.set = [assign = std::move(assign)](Config& c, const std::string& text) {
      // "true" and "false" are how JSON and earlier settings files wrote it.
      if (text == "on" || text == "true") return assign(c, true);
      if (text == "off" || text == "false") return assign(c, false);
      throw SettingError("is not on or off");
    };
    return s;
  }
};

// `rows` of a part of Outer (its member `part`), as rows of Outer.
template <typename Outer, typename Part>
std::vector<SettingRow<Outer>> settings_of_part(std::vector<SettingRow<Part>> rows, Part Outer::*part) {
  std::vector<SettingRow<Outer>> out;
  for (SettingRow<Part>& r : rows) {
    SettingRow<Outer> o{.key = std::move(r.key), .flag = std::move(r.flag), .alias = std::move(r.alias),
                        .help = std::move(r.help), .kind = r.kind, .choices = std::move(r.choices),
                        .min = r.min, .max = r.max, .step = r.step, .lowest_means = std::move(r.lowest_means),
                        .unit = std::move(r.unit), .timing = r.timing, .switch_cost = std::move(r.switch_cost),
                        .section = std::move(r.section), .label = std::move(r.label), .name = std::move(r.name),
                        .explanation = std::move(r.explanation), .switch_text = std::move(r.switch_text),
                        .applies_when = std::move(r.applies_when), .remembered = r.remembered};
    o.get = [get = std::move(r.get), part](const Outer& c) { return get(c.*part); };
    o.set = [set = std::move(r.set), part](Outer& c, const std::string& text) { set(c.*part, text); };
    if (r.applies) o.applies = [applies = std::move(r.applies), part](const Outer& c) { return applies(c.*part); };
    if (r.summary) o.summary = [summary = std::move(r.summary), part](const Outer& c) { return summary(c.*part); };
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace inferscope
