// First run: without a model the window shows the welcome page in place of its tabs and builds no
// engine; a recent model or a dropped file opens from it and the tabs take its place for good; a
// recent file that is gone is shown as missing and cannot be clicked.
#include <QCommandLinkButton>
#include <QDropEvent>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QUrl>

#include "gui/app/welcome_page.h"
#include "tests/gui/workbench_fixture.h"

namespace inferscope::gui::test {
namespace {

QString stories_model() { return QString::fromStdString(::inferscope::test::shared_model_path("stories260K.gguf")); }

// A window with no model and these recent models.
std::unique_ptr<MainWindow> window_with_recent(const QString& sessions, const QStringList& recent) {
  test_app();
  QSettings().setValue("recent_models", recent);
  return open_window(sessions);
}

TEST(WelcomePage, ShownWithoutAModelAndNoEngineIsBuilt) {
  QTemporaryDir dir;
  auto w = window_with_recent(dir.path(), {});
  EXPECT_TRUE(w->showing_welcome());
  EXPECT_TRUE(w->welcome()->isVisible());
  EXPECT_FALSE(w->tabs()->isVisible());
  QTest::qWait(200);  // the bridge's worker has had time to do anything it would do unasked
  EXPECT_FALSE(w->bridge().has_engine());
  EXPECT_FALSE(w->bridge().loading());
  EXPECT_TRUE(w->welcome()->open_button()->isVisible());
  EXPECT_TRUE(w->welcome()->fetch_button()->isEnabled());
  EXPECT_FALSE(w->welcome()->fetch_progress()->isVisible());  // nothing fetched unasked
  EXPECT_TRUE(w->welcome()->recent_buttons().isEmpty());
  EXPECT_GT(distinct_colors(render(*w, "welcome_page")), 20);
}

TEST(WelcomePage, ARecentModelOpensAndTheTabsReplaceThePageForGood) {
  INFERSCOPE_REQUIRE_FILE(model, ::inferscope::test::shared_model_path("stories260K.gguf"));
  QTemporaryDir dir;
  auto w = window_with_recent(dir.path(), {stories_model()});
  const QList<QPushButton*> recent = w->welcome()->recent_buttons();
  ASSERT_EQ(recent.size(), 1);
  EXPECT_EQ(recent[0]->text(), "stories260K.gguf");
  EXPECT_TRUE(recent[0]->isEnabled());
  recent[0]->click();
  ASSERT_TRUE(wait_for([&] { return w->bridge().has_engine(); }));
  EXPECT_FALSE(w->showing_welcome());
  EXPECT_TRUE(w->tabs()->isVisible());
  EXPECT_EQ(w->bridge().model_path(), stories_model());

  // A later model that fails to load keeps the current one, and the welcome page does not come back.
  bool failed = false;
  QObject::connect(&w->bridge(), &EngineBridge::model_failed, [&] { failed = true; });
  w->open_model(dir.filePath("no-such-model.gguf"));
  ASSERT_TRUE(wait_for([&] { return failed; }));
  EXPECT_FALSE(w->showing_welcome());
  EXPECT_EQ(w->bridge().model_path(), stories_model());
}

TEST(WelcomePage, AMissingRecentFileIsShownAsMissingAndCannotBeClicked) {
  INFERSCOPE_REQUIRE_FILE(model, ::inferscope::test::shared_model_path("stories260K.gguf"));
  QTemporaryDir dir;
  const QString gone = dir.filePath("moved-away.gguf");
  auto w = window_with_recent(dir.path(), {gone, stories_model()});
  const QList<QPushButton*> recent = w->welcome()->recent_buttons();
  ASSERT_EQ(recent.size(), 2);
  auto* missing = qobject_cast<QCommandLinkButton*>(recent[0]);
  ASSERT_NE(missing, nullptr);
  EXPECT_FALSE(missing->isEnabled());
  EXPECT_EQ(missing->description(), "missing: " + gone + " (moved or deleted)");
  EXPECT_TRUE(recent[1]->isEnabled());
  render(*w, "welcome_page_recent");
  missing->click();  // a disabled button does nothing
  QTest::qWait(100);
  EXPECT_FALSE(w->bridge().loading());
  EXPECT_TRUE(w->showing_welcome());
}

TEST(WelcomePage, AFileDroppedOnThePageOpens) {
  INFERSCOPE_REQUIRE_FILE(model, ::inferscope::test::shared_model_path("stories260K.gguf"));
  QTemporaryDir dir;
  auto w = window_with_recent(dir.path(), {});
  QMimeData mime;
  mime.setUrls({QUrl::fromLocalFile(stories_model())});
  // As a drag would: the enter event goes to the page (and on to whoever takes drops), the drop to the taker.
  QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(w->welcome(), &enter);
  ASSERT_TRUE(enter.isAccepted());
  QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(w->welcome(), &drop);
  ASSERT_TRUE(wait_for([&] { return w->bridge().has_engine(); }));
  EXPECT_FALSE(w->showing_welcome());
  EXPECT_EQ(w->bridge().model_path(), stories_model());
}

}  // namespace
}  // namespace inferscope::gui::test
