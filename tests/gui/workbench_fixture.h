// Driving the whole window offscreen: the test binary's QApplication (offscreen_app.h) with its
// settings and data folders (QSettings, QStandardPaths) in scratch folders, a temporary sessions
// folder, and a window on stories260K.
#pragma once
#include <QApplication>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>
#include <gtest/gtest.h>
#include <memory>

#include "gui/app/main_window.h"
#include "gui/bridge/engine_bridge.h"
#include "gui/chat/chat_panel.h"
#include "tests/gui/offscreen_app.h"
#include "tests/support/test_models.h"

namespace inferscope::gui::test {

inline QApplication& test_app() {
  static QTemporaryDir settings, data;
  qputenv("XDG_CONFIG_HOME", settings.path().toUtf8());  // recent models stay out of the user's settings
  qputenv("XDG_DATA_HOME", data.path().toUtf8());        // and fetched models out of the user's data
  return offscreen_app();
}

// Each test starts with empty settings (recent models, engine configuration, window layout): what one
// test's window saved never reaches the next test's.
class FreshSettings : public ::testing::EmptyTestEventListener {
  void OnTestStart(const ::testing::TestInfo&) override {
    test_app();
    QSettings().clear();
  }
};
inline const bool fresh_settings_installed = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new FreshSettings);
  return true;
}();

// Processes events until `done` holds or `ms` pass; returns done().
template <typename F>
bool wait_for(F done, int ms = 30000) {
  return QTest::qWaitFor(done, ms);
}

// A window over a sessions folder, with the engine polled often so short replies are seen live.
inline std::unique_ptr<MainWindow> open_window(const QString& sessions_dir, const QString& model = {}) {
  test_app();
  MainWindowOptions options;
  options.sessions_dir = sessions_dir;
  options.model_path = model;
  auto window = std::make_unique<MainWindow>(options);
  window->bridge().set_poll_interval_ms(10);
  window->show();
  return window;
}

// Waits until the window runs an engine on its model and has drawn the tabs that replaced the welcome
// page (their first paint is long: a reply sent before it could end before the view saw a token).
inline bool wait_for_engine(MainWindow& w, int ms = 30000) {
  if (!wait_for([&] { return w.bridge().has_engine() && !w.showing_welcome(); }, ms)) return false;
  QTest::qWait(200);
  return true;
}

// Types `text` into the current session and sends it; waits until the reply has finished.
inline bool chat_turn(MainWindow& w, const QString& text, int ms = 60000) {
  w.chat()->set_input_text(text);
  w.chat()->send();
  return wait_for([&] { return w.chat()->requests_in_flight() == 0; }, ms);
}

}  // namespace inferscope::gui::test
