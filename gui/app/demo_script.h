// Scripted demos for screenshots (`inferscope --screenshot OUT.png --demo-script FILE`): a JSON
// file of steps that drive the window as a user would, then a screenshot of the window at the end.
//
//   {
//     "window": [1600, 1000],                   optional size in pixels
//     "steps": [                                each step is an object with one action key
//       {"open_model": "models/x.gguf"},         loads a model and waits for it (relative paths: the
//                                                working directory, then resource_path.h's folders)
//       {"connect": "http://127.0.0.1:8080", "model": "m"},   runs on that server (model: its first
//                                                when none is named), once it has answered the probe
//       {"serve": 18081},                        serves the model on that loopback port (the Serve
//                                                switch) and waits until it listens
//       {"wait_served": 1, "timeout": 60},       until HTTP clients have sent this many requests
//       {"new_session": "Name", "system": "...", "temperature": 0.7, "max_tokens": 128},
//       {"select_session": "Name"},
//       {"send": "text", "session": "Name"},     sends a turn (the current session when none named)
//       {"config": {"kv": "contiguous", "block_size": 16, "kv_budget_mib": 64, "context": 1024,
//                   "prefix_cache": true, "attention": "naive", "kv_dtype": "q8", "quant": "q4",
//                   "scheduler": "static", "max_running": 4, "max_batch_tokens": 256,
//                   "threads": 2, "spec": "ngram", "spec_k": "auto", "ngram_min": 2, "ngram_max": 8,
//                   "draft_model": "models/x.gguf", "draft_quant": "q4", "draft_layers": 2,
//                   "draft_p_min": 0.1, "fuse": false}},   applies engine toggles and waits for the engine's answer
//                                                (a refused one stops the demo with the engine's reason)
//       {"compare": {"a": {...}, "b": {...},      runs an A/B comparison in the Compare A/B tab and waits
//                    "workload": "resources/workloads/compare-demo.json",   for it ("chat": the current
//                    "ignore_eos": true, "timeout": 300,   session); a and b: "config" toggles over the
//                    "simulated": {"b": "h200.json"}}},   engine's config; simulated: a side run as a dry
//                                                run on resources/devices/FILE (the other sides run locally)
//       {"wait": 1.5},                           seconds
//       {"wait_idle": 120},                      until no reply streams (timeout in seconds)
//       {"wait_tokens": 40, "timeout": 60},      until every streaming reply has at least this many tokens
//       {"tab": "Model"},                        "Chat", "Compare A/B", "Learn" or "Model"
//       {"token_view": true},                    the chat's per-token view on or off
//       {"show_plot": "spec_decode"},            scrolls the Chat tab's dashboard to a plot (its objectName)
//       {"show_toggle": "spec_mode"},            scrolls the config panel to a toggle (its objectName)
//       {"experiment": "3-paged-vs-contiguous", "timeout": 300},   runs a guided experiment (its file's
//                                                base name) in the Learn tab and waits for its narration
//       {"show_learn_plot": 2},                  scrolls the Learn tab's results to the experiment's plot 2
//                                                (1-based, as the report numbers them)
//       {"screenshot": "docs/screenshots/x.png"} the window as it is now
//     ]
//   }
// A bad script stops before anything runs, with an error naming the step and field.
#pragma once
#include <QObject>
#include <QString>
#include <QTimer>
#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/engine/engine_config.h"

namespace inferscope::gui {

class MainWindow;

class DemoScript : public QObject {
  Q_OBJECT
 public:
  // Parses and checks the script; throws std::runtime_error naming the file, step and field.
  DemoScript(MainWindow& window, const nlohmann::json& script, const QString& name, QString final_screenshot);
  static nlohmann::json read_file(const QString& path);
  // Runs the steps on the event loop; done(exit code) follows (0, or 2 with the error on stderr).
  void start();

 signals:
  void done(int exit_code);

 private:
  struct Step {
    std::string action;
    nlohmann::json args;  // the whole step object
  };
  void tick();
  void run_step(const Step& step);
  void fail(const QString& message);
  bool save_screenshot(const QString& path);
  // Shows the tab titled `name`; throws naming `where` when there is none.
  void select_tab(const QString& name, const std::string& where);
  QString where(size_t index) const;

  MainWindow& window_;
  QString name_, final_screenshot_;
  std::vector<Step> steps_;
  size_t next_ = 0;
  std::function<bool()> waiting_for_;  // the current step is done when it returns true
  qint64 deadline_ms_ = 0;
  int config_answers_ = 0;             // config results the bridge reported so far
  QString failure_;                    // set by callbacks (a model that would not load)
  QTimer timer_;
};

}  // namespace inferscope::gui
