#include "gui/app/command_line.h"

#include <QFileInfo>
#include <QSettings>
#include <stdexcept>

#include "gui/app/model_fetch.h"

namespace inferscope::gui {

void add_workbench_options(QCommandLineParser& parser) {
  parser.setApplicationDescription("Inferscope: chat with a local LLM and watch the inference engine work.");
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addOptions({
      {"model", "Open this GGUF model (default: the demo model when present).", "PATH"},
      {"sessions-dir", "Keep chat sessions here (default: INFERSCOPE_SESSIONS_DIR, else the app data folder).", "DIR"},
      {"screenshot", "Run a scripted demo and save the window to OUT.png, then quit.", "OUT.png"},
      {"demo-script", "The demo script for --screenshot (JSON; see gui/app/demo_script.h).", "FILE"},
  });
  parser.addPositionalArgument("PATH", "A GGUF model to open, as --model PATH does.", "[PATH]");
}

QString startup_model(const QCommandLineParser& args) {
  QStringList named = args.positionalArguments();
  if (args.isSet("model")) named.prepend(args.value("model"));
  if (named.size() > 1) throw std::runtime_error("one model at a time: " + named.join(", ").toStdString());
  if (!named.isEmpty()) return named.first();
  for (const QString& demo :
       {QString(INFERSCOPE_DEMO_MODEL), QString("models/SmolLM2-135M-Instruct.Q4_1.gguf"), fetched_demo_model_path()}) {
    if (QFileInfo::exists(demo)) return demo;
  }
  const QStringList recent = QSettings().value("recent_models").toStringList();
  return recent.isEmpty() ? QString() : recent.first();
}

}  // namespace inferscope::gui
