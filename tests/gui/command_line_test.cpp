// The workbench's command line: a model named by PATH (what a file manager's "Open with" passes) or by
// --model, never both; --version prints the project version.
#include <gtest/gtest.h>

#include <QCommandLineParser>
#include <stdexcept>

#include "gui/app/command_line.h"
#include "tests/gui/offscreen_app.h"

namespace inferscope::gui::test {
namespace {

// The workbench's parser after reading `arguments` (the program name first).
QString model_from(const QStringList& arguments) {
  QCommandLineParser parser;
  add_workbench_options(parser);
  EXPECT_TRUE(parser.parse(arguments)) << parser.errorText().toStdString();
  return startup_model(parser);
}

TEST(CommandLine, APlainPathOpensThatModel) {
  offscreen_app();
  EXPECT_EQ(model_from({"inferscope", "/models/My Model.gguf"}), "/models/My Model.gguf");
}

TEST(CommandLine, ModelOptionOpensThatModel) {
  offscreen_app();
  EXPECT_EQ(model_from({"inferscope", "--model", "/models/a.gguf"}), "/models/a.gguf");
  EXPECT_EQ(model_from({"inferscope", "--screenshot", "out.png", "--model", "/models/a.gguf"}), "/models/a.gguf");
}

TEST(CommandLine, TwoModelsAreRefusedNamingBoth) {
  offscreen_app();
  for (const QStringList& arguments : {QStringList{"inferscope", "--model", "/a.gguf", "/b.gguf"},
                                       QStringList{"inferscope", "/a.gguf", "/b.gguf"}}) {
    try {
      model_from(arguments);
      ADD_FAILURE() << "accepted " << arguments.join(' ').toStdString();
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("/a.gguf, /b.gguf"), std::string::npos) << e.what();
    }
  }
}

TEST(CommandLine, HelpNamesThePathArgumentAndVersion) {
  offscreen_app();
  QCommandLineParser parser;
  add_workbench_options(parser);
  const QString help = parser.helpText();
  EXPECT_TRUE(help.contains("[PATH]")) << help.toStdString();
  EXPECT_TRUE(help.contains("--version")) << help.toStdString();
}

}  // namespace
}  // namespace inferscope::gui::test
