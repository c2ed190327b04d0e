// The workbench's command line: its options, and which model it opens at start.
//   inferscope [--model PATH | PATH] [--sessions-dir DIR]
//   inferscope --screenshot OUT.png [--demo-script FILE] [--model PATH | PATH]
#pragma once
#include <QCommandLineParser>
#include <QString>

namespace inferscope::gui {

// --help, --version, --model, --sessions-dir, --screenshot, --demo-script and the optional model PATH
// (what a file manager passes when a .gguf file is opened with Inferscope).
void add_workbench_options(QCommandLineParser& parser);

// The model named by --model or by the PATH argument; else the demo model when present (the build's
// models/ folder, or the one the welcome page fetched); else the most recently opened one; else "". Throws std::runtime_error when more than one model is named.
QString startup_model(const QCommandLineParser& args);

}  // namespace inferscope::gui
