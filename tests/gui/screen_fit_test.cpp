// The window on a laptop's 1280x720 screen and on 1920x1080: every tab keeps the window the size it
// was given (no tab's minimum size widens it past the screen), no label, button, header, axis title or
// legend shows less than its text unless its tooltip holds it, the chat keeps at least a third of the
// window's height, and each Learn lesson shows whole or has half the tab. No progress bar draws text
// over its fill: the text beside or above it says how far a task is.
#include <QListWidget>
#include <QProgressBar>
#include <QScrollBar>
#include <QSplitter>
#include <QTabWidget>
#include <QTextBrowser>
#include <gtest/gtest.h>
#include <qcustomplot.h>

#include "gui/chat/chat_panel.h"
#include "gui/learn/learn_view.h"
#include "tests/gui/clipped_text.h"
#include "tests/gui/workbench_fixture.h"

namespace inferscope::gui::test {
namespace {

class ScreenFit : public ::testing::TestWithParam<QSize> {};

TEST_P(ScreenFit, EveryTabFitsAndShowsItsTextWhole) {
  const QSize screen = GetParam();
  const std::string at = std::to_string(screen.width()) + "x" + std::to_string(screen.height());
  QTemporaryDir dir;
  auto w = open_window(dir.path(), QString::fromStdString(::inferscope::test::shared_model_path("stories260K.gguf")));
  ASSERT_TRUE(wait_for_engine(*w));
  w->resize(screen);
  QApplication::processEvents();
  for (int tab = 0; tab < w->tabs()->count(); ++tab) {
    w->tabs()->setCurrentIndex(tab);
    QApplication::processEvents();
    const std::string name = w->tabs()->tabText(tab).toStdString();
    render(*w, QString::fromStdString("screen_fit_" + at + "_" + std::to_string(tab)));
    EXPECT_EQ(w->size(), screen) << "the " << name << " tab resized the window at " << at << " (its minimum is "
                                 << w->minimumSizeHint().width() << "x" << w->minimumSizeHint().height() << ")";
    for (const std::string& cut : clipped_texts(w.get())) ADD_FAILURE() << name << " tab at " << at << ": " << cut;
  }
  w->tabs()->setCurrentWidget(w->learn());
  auto* lessons = w->learn()->findChild<QListWidget*>("experiment_list");
  auto* intro = w->learn()->findChild<QTextBrowser*>("experiment_intro");
  auto* split = w->learn()->findChild<QSplitter*>("learn_splitter");
  ASSERT_TRUE(lessons && intro && split);
  for (int row = 0; row < lessons->count(); ++row) {
    lessons->setCurrentRow(row);
    QApplication::processEvents();
    EXPECT_TRUE(intro->verticalScrollBar()->maximum() == 0 || intro->height() * 2 + 2 >= split->height())
        << lessons->item(row)->text().toStdString() << " at " << at << ": its lesson scrolls in " << intro->height()
        << " px of " << split->height();
  }
  w->tabs()->setCurrentIndex(0);
  QApplication::processEvents();
  EXPECT_GE(w->chat()->height() * 3, w->height()) << "the chat has " << w->chat()->height() << " px of " << w->height();
}

TEST(ScreenFitProgress, NoProgressBarDrawsTextOverItsFill) {
  QTemporaryDir dir;
  auto w = open_window(dir.path());
  const QList<QProgressBar*> bars = w->findChildren<QProgressBar*>();
  EXPECT_GE(bars.size(), 4) << "status bar, config panel, Compare, Learn";
  for (const QProgressBar* bar : bars) EXPECT_FALSE(bar->isTextVisible()) << bar->objectName().toStdString();
}

INSTANTIATE_TEST_SUITE_P(Screens, ScreenFit, ::testing::Values(QSize(1280, 720), QSize(1920, 1080)),
                         [](const auto& instance) {
                           return std::to_string(instance.param.width()) + "x" + std::to_string(instance.param.height());
                         });

}  // namespace
}  // namespace inferscope::gui::test
