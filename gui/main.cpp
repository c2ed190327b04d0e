// inferscope: the workbench window.
//   inferscope [--model PATH] [--sessions-dir DIR]
//   inferscope --screenshot OUT.png [--demo-script FILE]   runs a scripted demo and saves the window
#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QSettings>
#include <QTemporaryDir>
#include <cstdio>
#include <cstring>
#include <memory>

#include "gui/app/demo_script.h"
#include "gui/app/main_window.h"
#include "gui/chat/session_store.h"

namespace {

bool has_flag(int argc, char** argv, const char* flag) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], flag) == 0) return true;
  }
  return false;
}

// --model, else the demo model when present, else the most recently opened one.
QString startup_model(const QCommandLineParser& args) {
  if (args.isSet("model")) return args.value("model");
  for (const QString& demo : {QString(INFERSCOPE_DEMO_MODEL), QString("models/SmolLM2-135M-Instruct.Q4_1.gguf")}) {
    if (QFileInfo::exists(demo)) return demo;
  }
  const QStringList recent = QSettings().value("recent_models").toStringList();
  return recent.isEmpty() ? QString() : recent.first();
}

}  // namespace

int main(int argc, char** argv) {
  // A scripted screenshot needs no screen: without a display, draw offscreen.
  const bool headless = qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY");
  if (has_flag(argc, argv, "--screenshot") && headless && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
  }
  QApplication app(argc, argv);
  QApplication::setOrganizationName("Inferscope");
  QApplication::setApplicationName("inferscope");
  QApplication::setApplicationVersion("0.1.0");

  QCommandLineParser args;
  args.setApplicationDescription("Inferscope: chat with a local LLM and watch the inference engine work.");
  args.addHelpOption();
  args.addOptions({
      {"model", "Open this GGUF model (default: the demo model when present).", "PATH"},
      {"sessions-dir", "Keep chat sessions here (default: INFERSCOPE_SESSIONS_DIR, else the app data folder).", "DIR"},
      {"screenshot", "Run a scripted demo and save the window to OUT.png, then quit.", "OUT.png"},
      {"demo-script", "The demo script for --screenshot (JSON; see gui/app/demo_script.h).", "FILE"},
  });
  args.process(app);

  const bool screenshot = args.isSet("screenshot");
  // Demos never touch the user's own sessions.
  QTemporaryDir scratch;
  inferscope::gui::MainWindowOptions options;
  options.sessions_dir = args.isSet("sessions-dir") ? args.value("sessions-dir")
                         : screenshot                ? scratch.path()
                                                     : inferscope::gui::SessionStore::default_dir();
  const QString model = startup_model(args);
  nlohmann::json script = {{"steps", nlohmann::json::array()}};
  QString script_name = "built-in demo";
  if (screenshot) {
    try {
      if (args.isSet("demo-script")) {
        script_name = args.value("demo-script");
        script = inferscope::gui::DemoScript::read_file(script_name);
      } else if (!model.isEmpty()) {
        script["steps"].push_back({{"open_model", model.toStdString()}});
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "inferscope: %s\n", e.what());
      return 2;
    }
  } else {
    options.model_path = model;
  }

  inferscope::gui::MainWindow window(options);
  window.show();
  if (!screenshot) return app.exec();

  std::unique_ptr<inferscope::gui::DemoScript> demo;
  try {
    demo = std::make_unique<inferscope::gui::DemoScript>(window, script, script_name, args.value("screenshot"));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "inferscope: %s\n", e.what());
    return 2;
  }
  QObject::connect(demo.get(), &inferscope::gui::DemoScript::done, &app, &QApplication::exit);
  demo->start();
  return app.exec();
}
