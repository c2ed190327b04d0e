#include "gui/app/demo_script.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QAction>
#include <QPixmap>
#include <QSettings>
#include <QTabWidget>
#include <cstdio>
#include <stdexcept>

#include "core/common/json_field.h"
#include "core/engine/config_overrides.h"
#include "core/remote/server_probe.h"
#include "gui/app/main_window.h"
#include "gui/bridge/engine_bridge.h"
#include "gui/bridge/resource_path.h"
#include "gui/chat/chat_panel.h"
#include "gui/compare/compare_view.h"
#include "gui/config/config_panel.h"
#include "gui/learn/learn_view.h"

namespace inferscope::gui {
namespace {

const char* const kActions[] = {"open_model", "new_session", "select_session", "send", "config", "compare", "wait",
                                "wait_idle", "wait_tokens", "tab", "token_view", "show_plot", "show_toggle", "screenshot",
                                "experiment", "show_learn_plot", "connect", "serve", "wait_served"};
constexpr qint64 kDefaultTimeoutMs = 300'000;

qint64 now_ms() { return QDateTime::currentMSecsSinceEpoch(); }

// A path written in a script, as a file to open (the working directory, then resource_path.h's folders).
std::string resource_path(const std::string& path) { return resolve_resource_path(QString::fromStdString(path)).toStdString(); }

// A "compare" step: optional "a" and "b" config overrides (over the engine's config), a "workload"
// ("chat" or a workload file), "ignore_eos", "timeout" (seconds) and "simulated" ({"b": "h200.json"}:
// the sides simulated on a device file of resources/devices).
void check_compare_step(const nlohmann::json& c, const std::string& where) {
  const std::string w = where + ": compare";
  if (!c.is_object()) throw std::runtime_error(w + " must be an object");
  for (const auto& [key, value] : c.items()) {
    if (key == "a" || key == "b") {
      apply_config_overrides({}, value, w + "." + key);
    } else if (key == "workload") {
      json_field<std::string>(c, "workload", w);
    } else if (key == "ignore_eos") {
      json_field<bool>(c, "ignore_eos", w);
    } else if (key == "timeout") {
      json_field<double>(c, "timeout", w);
    } else if (key == "simulated") {
      if (!value.is_object()) throw std::runtime_error(w + ".simulated must be an object");
      for (const auto& [side, file] : value.items()) {
        if (side != "a" && side != "b") throw std::runtime_error(w + ".simulated: unknown side '" + side + "'");
        json_field<std::string>(value, side.c_str(), w + ".simulated");
      }
    } else {
      throw std::runtime_error(w + ": unknown field '" + key + "'");
    }
  }
}

}  // namespace

DemoScript::DemoScript(MainWindow& window, const nlohmann::json& script, const QString& name, QString final_screenshot)
    : window_(window), name_(name), final_screenshot_(std::move(final_screenshot)) {
  const std::string file = name.toStdString();
  if (!script.is_object() || !script.contains("steps") || !script["steps"].is_array()) {
    throw std::runtime_error(file + ": expected an object with a 'steps' array");
  }
  if (script.contains("window")) {
    const auto size = json_field<std::vector<int>>(script, "window", file);
    if (size.size() != 2 || size[0] < 320 || size[1] < 240) throw std::runtime_error(file + ": 'window' must be [width, height]");
    window_.resize(size[0], size[1]);
  }
  for (size_t i = 0; i < script["steps"].size(); ++i) {
    const nlohmann::json& s = script["steps"][i];
    const std::string w = where(i).toStdString();
    Step step;
    for (const char* action : kActions) {
      if (s.is_object() && s.contains(action)) step.action = action;
    }
    if (step.action.empty()) throw std::runtime_error(w + ": no known action (" + s.dump() + ")");
    step.args = s;
    // Check each step's fields now, so a typo fails before the demo runs.
    if (step.action == "config") apply_config_overrides({}, s["config"], w);
    if (step.action == "compare") check_compare_step(s["compare"], w);
    if (step.action == "wait" || step.action == "wait_idle") json_field<double>(s, step.action.c_str(), w);
    if (step.action == "wait_tokens") json_field<int>(s, "wait_tokens", w);
    if (step.action == "token_view") json_field<bool>(s, "token_view", w);
    if (step.action == "show_learn_plot") json_field<int>(s, "show_learn_plot", w);
    if (step.action == "serve") json_field<uint16_t>(s, "serve", w);
    if (step.action == "wait_served") json_field<int>(s, "wait_served", w);
    if (step.action == "wait_served" && s.contains("timeout")) json_field<double>(s, "timeout", w);
    if (step.action == "experiment" && s.contains("timeout")) json_field<double>(s, "timeout", w);
    if (step.action == "connect" && s.contains("model")) json_field<std::string>(s, "model", w);
    if (step.action == "new_session" || step.action == "select_session" || step.action == "send" ||
        step.action == "tab" || step.action == "screenshot" || step.action == "open_model" || step.action == "show_plot" ||
        step.action == "show_toggle" || step.action == "experiment" || step.action == "connect") {
      json_field<std::string>(s, step.action.c_str(), w);
    }
    steps_.push_back(std::move(step));
  }
  timer_.setInterval(50);
  connect(&timer_, &QTimer::timeout, this, &DemoScript::tick);
  connect(&window_.bridge(), &EngineBridge::model_failed, this,
          [this](const QString& path, const QString& message) { failure_ = path + ": " + message; });
  connect(&window_.bridge(), &EngineBridge::config_result, this, [this](bool applied, const QString& message) {
    ++config_answers_;
    if (!applied) failure_ = "config rejected: " + message;
  });
  connect(&window_.bridge(), &EngineBridge::serving_changed, this, [this](const QString&, const QString& error) {
    if (!error.isEmpty()) failure_ = "not serving: " + error;
  });
}

nlohmann::json DemoScript::read_file(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) throw std::runtime_error(path.toStdString() + ": " + file.errorString().toStdString());
  const QByteArray bytes = file.readAll();
  try {
    return nlohmann::json::parse(bytes.begin(), bytes.end());
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path.toStdString() + ": not JSON: " + e.what());
  }
}

void DemoScript::select_tab(const QString& name, const std::string& where) {
  QTabWidget* tabs = window_.tabs();
  for (int i = 0; i < tabs->count(); ++i) {
    if (tabs->tabText(i) == name) return tabs->setCurrentIndex(i);
  }
  throw std::runtime_error(where + ": no tab named \"" + name.toStdString() + "\"");
}

QString DemoScript::where(size_t index) const { return QString("%1: steps[%2]").arg(name_).arg(index); }

void DemoScript::start() { timer_.start(); }

void DemoScript::fail(const QString& message) {
  timer_.stop();
  std::fprintf(stderr, "inferscope: %s\n", message.toUtf8().constData());
  emit done(2);
}

bool DemoScript::save_screenshot(const QString& path) {
  const QFileInfo info(path);
  QDir().mkpath(info.absolutePath());
  if (!window_.grab().save(path)) {
    fail(path + ": cannot write the screenshot");
    return false;
  }
  std::fprintf(stderr, "inferscope: saved %s\n", path.toUtf8().constData());
  return true;
}

void DemoScript::tick() {
  if (!failure_.isEmpty()) return fail(where(next_ == 0 ? 0 : next_ - 1) + ": " + failure_);
  if (waiting_for_) {
    if (!waiting_for_()) {
      if (now_ms() > deadline_ms_) fail(where(next_ - 1) + ": timed out");
      return;
    }
    waiting_for_ = nullptr;
  }
  if (next_ == steps_.size()) {
    timer_.stop();
    if (save_screenshot(final_screenshot_)) emit done(0);
    return;
  }
  const Step& step = steps_[next_++];
  run_step(step);
}

void DemoScript::run_step(const Step& step) {
  const nlohmann::json& a = step.args;
  const std::string w = where(next_ - 1).toStdString();
  ChatPanel& chat = *window_.chat();
  EngineBridge& bridge = window_.bridge();
  auto wait_until = [&](std::function<bool()> done, qint64 timeout_ms) {
    waiting_for_ = std::move(done);
    deadline_ms_ = now_ms() + timeout_ms;
  };
  auto session_named = [&](const std::string& name) {
    const int index = chat.find_session_named(QString::fromStdString(name));
    if (index < 0) throw std::runtime_error(w + ": no session named \"" + name + "\"");
    return index;
  };
  try {
    if (step.action == "open_model") {
      const QString path = resolve_resource_path(QString::fromStdString(json_field<std::string>(a, "open_model", w)));
      window_.open_model(path);
      wait_until([&bridge, path] { return !bridge.loading() && bridge.model_path() == path; }, kDefaultTimeoutMs);
    } else if (step.action == "connect") {
      RemoteEndpoint endpoint = make_endpoint(json_field<std::string>(a, "connect", w), "", a.value("model", ""));
      const ServerInfo info = probe_server(endpoint);  // a demo may wait for the server's answer
      if (endpoint.model.empty() && !info.models.empty()) endpoint.model = info.models.front();
      bridge.connect_remote(endpoint, info);
    } else if (step.action == "serve") {
      // As a user would: the port in the server settings, then the Serve switch.
      QSettings().setValue("serve/port", json_field<uint16_t>(a, "serve", w));
      window_.serve_action()->trigger();
      wait_until([&bridge] { return !bridge.serving_url().isEmpty(); }, kDefaultTimeoutMs);
    } else if (step.action == "wait_served") {
      const int64_t served = json_field<int>(a, "wait_served", w);
      const qint64 timeout = a.contains("timeout") ? static_cast<qint64>(json_field<double>(a, "timeout", w) * 1000) : kDefaultTimeoutMs;
      wait_until([&bridge, served] { return bridge.served_counts().submitted >= served; }, timeout);
    } else if (step.action == "new_session") {
      chat.new_session(QString::fromStdString(json_field<std::string>(a, "new_session", w)));
      if (a.contains("system")) chat.set_system_prompt(QString::fromStdString(json_field<std::string>(a, "system", w)));
      if (a.contains("temperature") || a.contains("max_tokens")) {
        const ChatSession& s = chat.session(chat.current_index());
        SamplingParams p = s.sampling;
        if (a.contains("temperature")) p.temperature = json_field<float>(a, "temperature", w);
        const int32_t max_tokens = a.contains("max_tokens") ? json_field<int32_t>(a, "max_tokens", w) : s.max_tokens;
        chat.set_sampling(p, max_tokens);
      }
    } else if (step.action == "select_session") {
      chat.select_session(session_named(json_field<std::string>(a, "select_session", w)));
    } else if (step.action == "send") {
      if (a.contains("session")) chat.select_session(session_named(json_field<std::string>(a, "session", w)));
      chat.set_input_text(QString::fromStdString(json_field<std::string>(a, "send", w)));
      chat.send();
    } else if (step.action == "config") {
      const EngineConfig next = apply_config_overrides(bridge.config(), a["config"], w, resource_path);
      window_.config_panel()->set_config(next);
      const int answers = config_answers_;
      bridge.set_config(next);
      // Done when the engine has answered and, for a new thread count, the new engine runs.
      wait_until([this, &bridge, answers] { return config_answers_ > answers && !bridge.busy(); }, kDefaultTimeoutMs);
    } else if (step.action == "compare") {
      const nlohmann::json& c = a["compare"];
      CompareView& compare = *window_.compare();
      const EngineConfig base = bridge.config();
      compare.set_configs(c.contains("a") ? apply_config_overrides(base, c["a"], w + ": compare.a", resource_path) : base,
                          c.contains("b") ? apply_config_overrides(base, c["b"], w + ": compare.b", resource_path) : base);
      const std::string workload = c.contains("workload") ? json_field<std::string>(c, "workload", w) : "chat";
      if (workload == "chat") {
        compare.use_chat_workload();
      } else {
        compare.use_workload_file(resolve_resource_path(QString::fromStdString(workload)));
      }
      if (c.contains("ignore_eos")) compare.set_run_to_output_tokens(json_field<bool>(c, "ignore_eos", w));
      const nlohmann::json simulated = c.value("simulated", nlohmann::json::object());
      for (int side : {0, 1}) {
        const std::string name = side == 0 ? "a" : "b";
        if (!simulated.contains(name)) {
          compare.set_on_server(side, false);
        } else if (!compare.set_simulated(side, QString::fromStdString(simulated[name].get<std::string>()))) {
          throw std::runtime_error(w + ": compare.simulated." + name + ": no readable device file " + simulated[name].get<std::string>());
        }
      }
      select_tab("Compare A/B", w);
      if (!compare.start()) throw std::runtime_error(w + ": the comparison did not start: " + compare.status_text().toStdString());
      const qint64 timeout = c.contains("timeout") ? static_cast<qint64>(json_field<double>(c, "timeout", w) * 1000) : kDefaultTimeoutMs;
      wait_until([this, &compare] {
        if (compare.running()) return false;
        if (!compare.result()) failure_ = "comparison ended without results: " + compare.status_text();
        return true;
      }, timeout);
    } else if (step.action == "wait") {
      const qint64 until = now_ms() + static_cast<qint64>(json_field<double>(a, "wait", w) * 1000);
      wait_until([until] { return now_ms() >= until; }, kDefaultTimeoutMs);
    } else if (step.action == "wait_idle") {
      wait_until([&chat] { return chat.requests_in_flight() == 0; }, static_cast<qint64>(json_field<double>(a, "wait_idle", w) * 1000));
    } else if (step.action == "wait_tokens") {
      const int tokens = json_field<int>(a, "wait_tokens", w);
      const qint64 timeout = a.contains("timeout") ? static_cast<qint64>(json_field<double>(a, "timeout", w) * 1000) : kDefaultTimeoutMs;
      wait_until([&chat, tokens] {
        for (int i = 0; i < chat.session_count(); ++i) {
          const int n = chat.streaming_tokens(i);
          if (n >= 0 && n < tokens) return false;
        }
        return true;
      }, timeout);
    } else if (step.action == "tab") {
      select_tab(QString::fromStdString(json_field<std::string>(a, "tab", w)), w);
    } else if (step.action == "token_view") {
      chat.set_token_view(json_field<bool>(a, "token_view", w));
    } else if (step.action == "show_plot") {
      const std::string name = json_field<std::string>(a, "show_plot", w);
      if (!window_.show_plot(QString::fromStdString(name))) throw std::runtime_error(w + ": no dashboard plot named \"" + name + "\"");
    } else if (step.action == "show_toggle") {
      const std::string name = json_field<std::string>(a, "show_toggle", w);
      if (!window_.config_panel()->reveal(QString::fromStdString(name))) throw std::runtime_error(w + ": no toggle named \"" + name + "\"");
    } else if (step.action == "experiment") {
      const std::string id = json_field<std::string>(a, "experiment", w);
      LearnView& learn = *window_.learn();
      if (!learn.select_experiment(QString::fromStdString(id))) throw std::runtime_error(w + ": no experiment named \"" + id + "\"");
      select_tab("Learn", w);
      if (!learn.start()) throw std::runtime_error(w + ": the experiment did not start: " + learn.status_text().toStdString());
      const qint64 timeout = a.contains("timeout") ? static_cast<qint64>(json_field<double>(a, "timeout", w) * 1000) : kDefaultTimeoutMs;
      wait_until([this, &learn] {
        if (learn.running()) return false;
        if (!learn.result()) failure_ = "the experiment ended without results: " + learn.status_text();
        return true;
      }, timeout);
    } else if (step.action == "show_learn_plot") {
      const int n = json_field<int>(a, "show_learn_plot", w);
      if (!window_.learn()->show_plot(n - 1)) throw std::runtime_error(w + ": the experiment shown has no plot " + std::to_string(n));
    } else if (step.action == "screenshot") {
      save_screenshot(QString::fromStdString(json_field<std::string>(a, "screenshot", w)));
    }
  } catch (const std::exception& e) {
    fail(QString::fromStdString(e.what()));
  }
}

}  // namespace inferscope::gui
