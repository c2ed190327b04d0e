// inferscope: the workbench window.
//   inferscope [--model PATH | PATH] [--sessions-dir DIR]
//   inferscope --screenshot OUT.png [--demo-script FILE]   runs a scripted demo and saves the window
#include <QApplication>
#include <QCommandLineParser>
#include <QSettings>
#include <QTemporaryDir>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <memory>

#include "core/version/version.h"
#include "gui/app/command_line.h"
#include "gui/app/demo_script.h"
#include "gui/app/main_window.h"
#include "gui/app/window_layout.h"
#include "gui/chat/session_store.h"

namespace {

bool has_any_flag(int argc, char** argv, std::initializer_list<const char*> flags) {
  for (int i = 1; i < argc; ++i) {
    for (const char* flag : flags) {
      if (std::strcmp(argv[i], flag) == 0) return true;
    }
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  // A scripted screenshot, --help and --version need no screen: without a display, draw offscreen.
  const bool headless = qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY");
  const bool needs_no_screen = has_any_flag(argc, argv, {"--screenshot", "--help", "-h", "--version", "-v"});
  if (needs_no_screen && headless && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
  }
  QApplication app(argc, argv);
  QApplication::setOrganizationName("Inferscope");
  QApplication::setApplicationName("inferscope");
  QApplication::setApplicationVersion(QString::fromStdString(inferscope::version_string()));

  QCommandLineParser args;
  inferscope::gui::add_workbench_options(args);
  args.process(app);

  const bool screenshot = args.isSet("screenshot");
  // Demos never touch the user's own sessions or settings (recent models, engine configuration, layout).
  QTemporaryDir scratch;
  if (screenshot) {
    for (QSettings::Format format : {QSettings::NativeFormat, QSettings::IniFormat}) {
      QSettings::setPath(format, QSettings::UserScope, scratch.path() + "/settings");
    }
  }
  inferscope::gui::MainWindowOptions options;
  options.sessions_dir = args.isSet("sessions-dir") ? args.value("sessions-dir")
                         : screenshot                ? scratch.path()
                                                     : inferscope::gui::SessionStore::default_dir();
  nlohmann::json script = {{"steps", nlohmann::json::array()}};
  QString script_name = "built-in demo";
  QString model;
  try {
    model = inferscope::gui::startup_model(args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "inferscope: %s\n", e.what());
    return 2;
  }
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
  if (!screenshot) inferscope::gui::fit_window_to_screen(window);  // a scripted demo sets its own size
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
