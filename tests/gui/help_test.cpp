// "What is this?": every help entry says what, unit, scope and what moves it; the engine's and one
// reply's tok/s are told apart; a "?" button shows its text when clicked, and its popup closes on
// Escape and on any click without ever grabbing the input.
#include <gtest/gtest.h>

#include <QLabel>
#include <QPushButton>
#include <QScreen>
#include <QSet>
#include <QTest>
#include <stdexcept>

#include "gui/help/help_button.h"
#include "tests/gui/offscreen_app.h"

namespace inferscope::gui::test {
namespace {

TEST(HelpTexts, EveryEntryIsCompleteAndNamedOnce) {
  QSet<QString> keys;
  for (const HelpText& h : help_texts()) {
    const QString key = QLatin1String(h.key);
    EXPECT_FALSE(keys.contains(key)) << h.key;
    keys.insert(key);
    for (const QString& part : {h.title, h.definition, h.unit, h.scope, h.moves}) EXPECT_FALSE(part.isEmpty()) << h.key;
    const QString html = help_html(h);
    for (const QString& part : {h.title, h.unit, h.scope}) EXPECT_TRUE(html.contains(part.toHtmlEscaped())) << h.key;
  }
  EXPECT_STREQ(help_text("kv_usage").key, "kv_usage");
  EXPECT_EQ(help_text("kv_usage").title, "KV cache usage");
  EXPECT_THROW(help_text("no_such_chart"), std::out_of_range);
}

TEST(HelpTexts, EngineThroughputAndOneRepliesSpeedAreToldApart) {
  for (const char* engine : {"decode_tokens_per_second", "status_engine_decode"}) {
    EXPECT_TRUE(help_text(engine).scope.contains("every request")) << engine;
    EXPECT_TRUE(help_text(engine).definition.contains("this reply: N tok/s decode")) << engine;
  }
  EXPECT_TRUE(help_text("reply_stats").scope.contains("this reply only"));
  EXPECT_TRUE(help_text("reply_stats").moves.contains("every request together"));
}

TEST(HelpButton, ClickShowsTheTextAndHoverTooltipIsTheSame) {
  offscreen_app();
  QWidget host;
  host.resize(300, 200);
  const HelpText& help = help_text("roofline");
  HelpButton* button = attach_help(&host, help);
  host.show();
  EXPECT_EQ(button->objectName(), "help_roofline");
  EXPECT_EQ(host.toolTip(), help_html(help));
  EXPECT_EQ(button->toolTip(), help_html(help));
  EXPECT_TRUE(button->isVisible());
  EXPECT_EQ(button->geometry().right(), host.width() - 4) << "pinned to the top-right corner";
  host.resize(500, 200);
  EXPECT_EQ(button->geometry().right(), host.width() - 4) << "and stays there";
  EXPECT_FALSE(button->popup()->isVisible());
  QTest::mouseClick(button, Qt::LeftButton);
  ASSERT_TRUE(button->popup()->isVisible());
  EXPECT_EQ(button->popup()->text(), help_html(help));
  EXPECT_TRUE(button->popup()->text().contains("ridge point"));
  EXPECT_GT(distinct_colors(render(*button->popup(), "help_popup")), 4) << "the popup shows its text";
}

// The popup never traps the user: it takes no mouse or keyboard grab, and Escape, a click outside, a
// click on its text and a second click on "?" each close it, with the rest of the window answering.
TEST(HelpButton, PopupClosesOnEscapeOutsideClickInsideClickAndSecondClick) {
  offscreen_app();
  QWidget host;
  host.resize(400, 300);
  auto* other = new QPushButton(QStringLiteral("other"), &host);
  other->move(10, 250);
  int other_clicks = 0;
  QObject::connect(other, &QPushButton::clicked, [&] { ++other_clicks; });
  HelpButton* button = attach_help(&host, help_text("kv_usage"));
  host.show();
  QApplication::processEvents();
  const auto open = [&] {
    QTest::mouseClick(button, Qt::LeftButton);
    QApplication::processEvents();
    return button->popup()->isVisible();
  };
  ASSERT_TRUE(open());
  EXPECT_EQ(QWidget::mouseGrabber(), nullptr) << "a popup that grabs the mouse can lock the window";
  EXPECT_EQ(QWidget::keyboardGrabber(), nullptr);
  QTest::keyClick(&host, Qt::Key_Escape);
  EXPECT_FALSE(button->popup()->isVisible()) << "Escape";

  ASSERT_TRUE(open());
  QTest::mouseClick(other, Qt::LeftButton);
  EXPECT_FALSE(button->popup()->isVisible()) << "a click outside";
  EXPECT_EQ(other_clicks, 1) << "and that click still reaches what it was aimed at";

  ASSERT_TRUE(open());
  QTest::mouseClick(button->popup(), Qt::LeftButton);
  EXPECT_FALSE(button->popup()->isVisible()) << "a click on the text";

  ASSERT_TRUE(open());
  QTest::mouseClick(button, Qt::LeftButton);
  QApplication::processEvents();
  EXPECT_FALSE(button->popup()->isVisible()) << "a second click on ?";
}

// A popup opened near the screen's right or bottom edge is moved back onto the screen, and never
// covers the "?" it came from: near the bottom it opens above it.
TEST(HelpButton, PopupStaysOnTheScreen) {
  offscreen_app();
  QWidget host;
  const QRect screen = host.screen()->availableGeometry();
  host.setGeometry(screen.right() - 120, screen.bottom() - 60, 100, 40);
  HelpButton* button = attach_help(&host, help_text("ttft"));
  host.show();
  QApplication::processEvents();
  QTest::mouseClick(button, Qt::LeftButton);
  ASSERT_TRUE(button->popup()->isVisible());
  EXPECT_TRUE(screen.contains(button->popup()->frameGeometry())) << "popup at " << button->popup()->x() << ","
                                                                  << button->popup()->y();
  const QRect anchor(button->mapToGlobal(QPoint(0, 0)), button->size());
  EXPECT_FALSE(button->popup()->frameGeometry().intersects(anchor)) << "the popup covers its own button";
  EXPECT_LE(button->popup()->frameGeometry().bottom(), anchor.top()) << "opened above the button";
}

}  // namespace
}  // namespace inferscope::gui::test
