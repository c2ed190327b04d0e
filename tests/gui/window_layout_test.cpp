// The window at the README's size (1680x1050), offscreen: every dashboard plot (Chat and Compare
// tabs), every config toggle and every field of the Compare editors can be reached: in full view, or
// inside a scroll area that is itself in view, shows its scroll bar with a handle that stands out
// from the groove, and scrolls the widget whole into view. And a window opens inside the screen's free
// area, whatever size it had or was saved with.
#include <QScrollArea>
#include <QScrollBar>
#include <QStyleOptionSlider>
#include <QTabWidget>
#include <cstdlib>
#include <qcustomplot.h>

#include "gui/app/window_layout.h"
#include "gui/compare/compare_view.h"
#include "gui/config/config_panel.h"
#include "gui/dashboard/metrics_dashboard.h"
#include "tests/gui/workbench_fixture.h"

namespace inferscope::gui::test {
namespace {

// The part of `w` its ancestors leave visible, in window coordinates.
QRect visible_rect(const QWidget* w) {
  const QWidget* window = w->window();
  QRect r(w->mapTo(window, QPoint(0, 0)), w->size());
  for (const QWidget* p = w->parentWidget(); p && p != window; p = p->parentWidget()) {
    r &= QRect(p->mapTo(window, QPoint(0, 0)), p->size());
  }
  return r & window->rect();
}

bool fully_visible(const QWidget* w) { return w->isVisible() && visible_rect(w).size() == w->size(); }

QScrollArea* enclosing_scroll(QWidget* w) {
  for (QWidget* p = w->parentWidget(); p; p = p->parentWidget()) {
    if (auto* scroll = qobject_cast<QScrollArea*>(p)) return scroll;
  }
  return nullptr;
}

// How much a vertical scroll bar's handle stands out: the grey-level difference between the handle's
// middle and the groove beside it.
int handle_contrast(QScrollBar* bar) {
  QStyleOptionSlider opt;
  opt.initFrom(bar);
  opt.subControls = QStyle::SC_All;
  opt.orientation = bar->orientation();
  opt.minimum = bar->minimum();
  opt.maximum = bar->maximum();
  opt.sliderPosition = bar->sliderPosition();
  opt.sliderValue = bar->value();
  opt.singleStep = bar->singleStep();
  opt.pageStep = bar->pageStep();
  const QRect handle = bar->style()->subControlRect(QStyle::CC_ScrollBar, &opt, QStyle::SC_ScrollBarSlider, bar);
  const QRect groove = bar->style()->subControlRect(QStyle::CC_ScrollBar, &opt, QStyle::SC_ScrollBarGroove, bar);
  const QImage image = render(*bar, "scroll_bar");
  // The groove's free part is below the handle at the top (value 0), above it otherwise.
  const int groove_y = handle.bottom() < groove.bottom() - 4 ? (handle.bottom() + groove.bottom()) / 2
                                                             : (groove.top() + handle.top()) / 2;
  return std::abs(qGray(image.pixel(handle.center())) - qGray(image.pixel(groove.center().x(), groove_y)));
}

// `w` in full view, or reachable by an obvious scroll bar (see the file comment).
void expect_reachable(QWidget* w, const std::string& what) {
  if (fully_visible(w)) return;
  QScrollArea* scroll = enclosing_scroll(w);
  ASSERT_NE(scroll, nullptr) << what << " is cut off and nothing scrolls to it";
  EXPECT_TRUE(fully_visible(scroll->viewport())) << what << ": its scroll area is cut off itself";
  QScrollBar* bar = scroll->verticalScrollBar();
  ASSERT_TRUE(bar->isVisible()) << what << " is cut off and its scroll area shows no scroll bar";
  EXPECT_GE(bar->width(), 10) << what;
  EXPECT_GE(handle_contrast(bar), 40) << what << ": the scroll bar's handle hardly shows";
  // Scrolled as a user drags the bar: until its bottom shows (ensureWidgetVisible would aim at a
  // spin box's text cursor, not the whole box).
  const int top = w->mapTo(scroll->widget(), QPoint(0, 0)).y();
  bar->setValue(top + w->height() - scroll->viewport()->height());
  QApplication::processEvents();
  EXPECT_TRUE(fully_visible(w)) << what << " cannot be scrolled whole into view";
  bar->setValue(0);
  QApplication::processEvents();
}

// The named toggles of `panel` that show (a mode's other fields stay hidden).
std::vector<QWidget*> toggles(QWidget* panel, const QString& prefix = {}) {
  std::vector<QWidget*> out;
  for (QWidget* w : panel->findChildren<QWidget*>()) {
    const QString name = w->objectName();
    if (name.isEmpty() || name.startsWith("qt_") || !name.startsWith(prefix) || !w->isVisibleTo(panel)) continue;
    out.push_back(w);
  }
  return out;
}

TEST(WorkbenchLayout, AWindowOpensInsideTheScreensFreeArea) {
  const QRect laptop(0, 32, 1280, 688);  // 1280x720 under a 32-px top panel
  // The 1600x1000 default fills a laptop's free area.
  EXPECT_EQ(fitted_to_screen(QRect(0, 0, 1600, 1000), laptop), laptop);
  // A window saved on a larger screen, at its right: smaller and slid back in.
  EXPECT_EQ(fitted_to_screen(QRect(1500, 400, 1000, 600), laptop), QRect(280, 120, 1000, 600));
  // One that fits stays as it is.
  EXPECT_EQ(fitted_to_screen(QRect(100, 100, 900, 500), laptop), QRect(100, 100, 900, 500));
  EXPECT_EQ(fitted_to_screen(QRect(0, 0, 1600, 1000), QRect(0, 0, 1920, 1080)), QRect(0, 0, 1600, 1000));
}

TEST(WorkbenchLayout, AtTheReadmeSizeEveryPlotAndToggleCanBeReached) {
  QTemporaryDir dir;
  auto w = open_window(dir.path(), QString::fromStdString(::inferscope::test::shared_model_path("stories260K.gguf")));
  ASSERT_TRUE(wait_for([&] { return w->bridge().has_engine(); }));
  w->resize(1680, 1050);
  QApplication::processEvents();
  ASSERT_EQ(w->size(), QSize(1680, 1050));
  render(*w, "window_1680x1050_chat");

  for (QCustomPlot* plot : w->dashboard()->plots()) expect_reachable(plot, "chat plot " + plot->objectName().toStdString());
  const std::vector<QWidget*> config = toggles(w->config_panel());
  EXPECT_GE(config.size(), 15u);
  for (QWidget* toggle : config) expect_reachable(toggle, "toggle " + toggle->objectName().toStdString());

  w->tabs()->setCurrentWidget(w->compare());
  QApplication::processEvents();
  render(*w, "window_1680x1050_compare");
  for (QCustomPlot* plot : w->compare()->dashboard()->plots()) {
    expect_reachable(plot, "compare plot " + plot->objectName().toStdString());
  }
  for (const char* side : {"a_", "b_"}) {
    for (QWidget* field : toggles(w->compare(), side)) expect_reachable(field, "field " + field->objectName().toStdString());
  }
}

}  // namespace
}  // namespace inferscope::gui::test
