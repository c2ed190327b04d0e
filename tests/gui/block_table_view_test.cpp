// The block-table view on known snapshots: each cell is the right block, clicking selects its owner
// (and a shared block cycles its owners), the selection lists the logical -> physical table, hovering
// explains the block with its tokens' text, colours follow labels, contiguous waste is drawn to
// scale, region captions and bar labels fit what they label at any width, and thousands of blocks
// still fit (smaller cells, then scrolling).
#include <gtest/gtest.h>

#include <QImage>
#include <QListWidget>
#include <QSignalSpy>
#include <cmath>
#include <QTest>

#include "gui/blocks/block_grid.h"
#include "gui/blocks/block_legend.h"
#include "gui/blocks/block_paint.h"
#include "gui/blocks/block_table_view.h"
#include "gui/blocks/block_tooltip.h"
#include "gui/blocks/window_blocks.h"
#include "tests/gui/offscreen_app.h"

namespace inferscope::gui::test {
namespace {

// 12 blocks of 4 slots. seq 7: "ab" + shared prefix, blocks 0 1 2 (2 partly filled); seq 9 shares
// block 0 then owns 5; block 3 cached-free; the rest free.
KvSnapshot paged_snapshot() {
  KvSnapshot s;
  s.kind = "paged";
  s.block_size = 4;
  s.blocks.resize(12);
  auto own = [&](int b, std::vector<SeqId> owners, int32_t filled) {
    s.blocks[b].owners = owners;
    s.blocks[b].ref_count = static_cast<int32_t>(owners.size());
    s.blocks[b].filled = filled;
  };
  own(0, {7, 9}, 4);
  s.blocks[0].hash = 0xabcdef;
  own(1, {7}, 4);
  own(2, {7}, 2);
  own(5, {9}, 3);
  s.blocks[3].cached = true;
  s.blocks[3].filled = 4;
  s.blocks[3].hash = 0x1234;
  s.sequences.push_back({7, 10, {0, 1, 2}, {10, 11, 12, 13, 20, 21, 22, 23, 30, 31}, {}});
  s.sequences.push_back({9, 7, {0, 5}, {10, 11, 12, 13, 40, 41, 42}, {}});
  return s;
}

// Four regions of 100 slots: seq 1 uses 25, seq 2 uses 80, two are free.
KvSnapshot contiguous_snapshot() {
  KvSnapshot s;
  s.kind = "contiguous";
  s.block_size = 100;
  s.blocks.resize(4);
  s.blocks[0] = {{1}, 1, 25, false, 0};
  s.blocks[2] = {{2}, 1, 80, false, 0};
  s.sequences.push_back({1, 25, {0}, {}, {}});
  s.sequences.push_back({2, 80, {2}, {}, {}});
  return s;
}

// Token ids as letters: 10 -> "k" ...
QString letters(std::span<const int32_t> ids) {
  QString out;
  for (int32_t id : ids) out += QChar('a' + id % 26);
  return out;
}

QPoint center_of(BlockGrid* grid, int32_t block) { return grid->block_rect(block).center(); }

struct View : ::testing::Test {
  View() {
    view.resize(900, 420);
    view.show();
    QApplication::processEvents();
  }
  QApplication& app = offscreen_app();  // before any widget
  BlockTableView view;
};

TEST_F(View, EveryCellIsItsBlock) {
  view.update_from(paged_snapshot());
  BlockGrid* grid = view.grid();
  for (int32_t b = 0; b < 12; ++b) {
    const QRect r = grid->block_rect(b);
    ASSERT_FALSE(r.isEmpty()) << b;
    EXPECT_EQ(grid->block_at(r.center()), b);
    EXPECT_EQ(grid->block_at(r.topLeft()), b);
    EXPECT_EQ(grid->block_at(r.bottomRight()), b);
  }
  EXPECT_LT(grid->block_rect(0).left(), grid->block_rect(1).left()) << "ids run left to right";
  EXPECT_EQ(grid->block_at(QPoint(1, 1)), -1) << "the margin is no block";
  EXPECT_EQ(grid->block_at(grid->block_rect(11).bottomRight() + QPoint(grid->cell_size(), 0)), -1);
  EXPECT_EQ(grid->cell_size(), BlockGrid::kMaxCell) << "12 blocks fit at the largest size";
}

TEST_F(View, ClickingABlockSelectsItsOwnerAndListsItsTable) {
  view.update_from(paged_snapshot());
  QSignalSpy spy(&view, &BlockTableView::sequence_selected);
  QTest::mouseClick(view.grid(), Qt::LeftButton, {}, center_of(view.grid(), 2));
  ASSERT_EQ(spy.count(), 1);
  EXPECT_EQ(spy.at(0).at(0).toInt(), 7);
  EXPECT_EQ(view.selected_sequence(), 7);
  EXPECT_EQ(view.selected_table(), (std::vector<std::pair<int32_t, int32_t>>{{0, 0}, {1, 1}, {2, 2}}));
  // The shared block 0 belongs to 7 and 9: clicking it again moves on to 9.
  QTest::mouseClick(view.grid(), Qt::LeftButton, {}, center_of(view.grid(), 0));
  EXPECT_EQ(view.selected_sequence(), 9);
  EXPECT_EQ(view.selected_table(), (std::vector<std::pair<int32_t, int32_t>>{{0, 0}, {1, 5}}));
  // A free block clears the selection.
  QTest::mouseClick(view.grid(), Qt::LeftButton, {}, center_of(view.grid(), 8));
  EXPECT_EQ(view.selected_sequence(), -1);
  EXPECT_TRUE(view.selected_table().empty());
  ASSERT_EQ(spy.count(), 3);
  EXPECT_EQ(spy.at(2).at(0).toInt(), -1);
}

TEST_F(View, SelectSequenceHighlightsAndSurvivesUpdatesUntilItsRequestEnds) {
  view.update_from(paged_snapshot());
  QSignalSpy spy(&view, &BlockTableView::sequence_selected);
  view.select_sequence(9);
  view.select_sequence(9);  // no change, no second signal
  EXPECT_EQ(spy.count(), 1);
  view.select_sequence(42);  // not in the cache
  EXPECT_EQ(view.selected_sequence(), -1);
  view.select_sequence(9);
  KvSnapshot later = paged_snapshot();
  later.sequences[1].block_table.push_back(6);
  view.update_from(later);
  EXPECT_EQ(view.selected_table().back(), std::make_pair(2, 6));
  later.sequences.pop_back();  // 9 finished
  view.update_from(later);
  EXPECT_EQ(view.selected_sequence(), -1);

  // Highlighting shows in the pixels: the selected sequence's cells keep their colour, others dim.
  view.update_from(paged_snapshot());
  view.set_sequence_owners({{7, {"s1", "chat 1"}}, {9, {"s2", "chat 2"}}});
  const QImage plain = render(view, "block_table_paged");
  view.select_sequence(7);
  const QImage selected = render(view, "block_table_paged_selected");
  BlockGrid* grid = view.grid();
  const QPoint origin = grid->mapTo(&view, QPoint(0, 0));
  const QPoint inside_7 = origin + grid->block_rect(1).topLeft() + QPoint(4, grid->cell_size() / 2);
  const QPoint inside_9 = origin + grid->block_rect(5).topLeft() + QPoint(4, grid->cell_size() / 2);
  EXPECT_EQ(selected.pixel(inside_7), plain.pixel(inside_7));
  EXPECT_NE(selected.pixel(inside_9), plain.pixel(inside_9));
}

// A request served to an HTTP client is labelled with the client; a chat session's with the session.
TEST_F(View, AServedRequestIsLabelledWithItsClient) {
  BlockTableView view;
  KvSnapshot s = paged_snapshot();
  s.sequences[1].client = "curl/8.5.0 at 127.0.0.1";
  view.update_from(s);
  view.set_sequence_owners({{7, {"s1", "chat 1"}}});
  const QListWidget* list = view.findChild<QListWidget*>();
  ASSERT_NE(list, nullptr);
  ASSERT_EQ(list->count(), 2);
  EXPECT_TRUE(list->item(0)->text().startsWith("chat 1 · seq 7")) << list->item(0)->text().toStdString();
  EXPECT_TRUE(list->item(1)->text().startsWith("curl/8.5.0 at 127.0.0.1 · seq 9")) << list->item(1)->text().toStdString();
}

TEST_F(View, HoverTextNamesTheBlockAndItsTokens) {
  const KvSnapshot s = paged_snapshot();
  const auto label = [](SeqId id) { return id == 7 ? QStringLiteral("chat 1") : QStringLiteral("chat 2"); };
  const QString shared = block_tooltip(s, 0, label, letters);
  EXPECT_TRUE(shared.contains("Block 0 (4 token slots)")) << shared.toStdString();
  EXPECT_TRUE(shared.contains("owners: chat 1 (seq 7), chat 2 (seq 9)")) << shared.toStdString();
  EXPECT_TRUE(shared.contains("ref count: 2 (shared")) << shared.toStdString();
  EXPECT_TRUE(shared.contains("filled: 4 / 4 tokens")) << shared.toStdString();
  EXPECT_TRUE(shared.contains("prefix hash: 0000000000abcdef")) << shared.toStdString();
  EXPECT_TRUE(shared.contains("text: “klmn”")) << shared.toStdString();  // ids 10..13
  // Block 2 is seq 7's logical block 2: its two written tokens, ids 30 and 31.
  EXPECT_TRUE(block_tooltip(s, 2, label, letters).contains("text: “ef”"));
  EXPECT_TRUE(block_tooltip(s, 2, label, letters).contains("seq 7: logical block 2"));
  EXPECT_EQ(block_tokens(s, 5), (std::vector<int32_t>{40, 41, 42}));
  EXPECT_TRUE(block_tooltip(s, 3, label, letters).contains("free, cached"));
  EXPECT_TRUE(block_tooltip(s, 9, label, {}).endsWith("free"));
  EXPECT_TRUE(block_tooltip(s, 1, label, {}).contains("token ids 20 21 22 23")) << "no decoder: the ids";
  EXPECT_TRUE(block_tooltip(s, 99, label, letters).isEmpty());
}

// With a sliding window, a block that no owner's next token sees in the local layers any more is
// veiled, counted in the header and explained on hover; a shared block stays inside while one owner
// still sees it.
TEST_F(View, BlocksOutsideTheSlidingWindowAreMarked) {
  const KvSnapshot s = paged_snapshot();
  // window 4: seq 7 (10 tokens) next sees positions 7..10, seq 9 (7 tokens) 4..7: only block 0
  // (positions 0..3 of both) is behind both
  std::vector<bool> want(12, false);
  want[0] = true;
  EXPECT_EQ(blocks_outside_window(s, 4), want);
  // window 5: seq 9 sees 3..7, so the shared block 0 is still read; block 1 (seq 7's 4..7) too
  EXPECT_EQ(blocks_outside_window(s, 5), std::vector<bool>(12, false));
  // window 3: seq 7 sees 8..10, so its block 1 (4..7) is behind it as well
  want[1] = true;
  EXPECT_EQ(blocks_outside_window(s, 3), want);
  EXPECT_EQ(blocks_outside_window(s, 0), std::vector<bool>(12, false));
  EXPECT_EQ(blocks_outside_window(contiguous_snapshot(), 1), std::vector<bool>(4, false));

  view.update_from(s);
  const QImage plain = render(view, "block_table_paged");
  view.set_sliding_window({4, 3, 4});
  const QImage windowed = render(view, "block_table_paged_window");
  BlockGrid* grid = view.grid();
  EXPECT_TRUE(grid->outside_window(0));
  EXPECT_FALSE(grid->outside_window(1));
  EXPECT_TRUE(view.summary_text().endsWith(" · 1 outside the local layers' 4-token window")) << view.summary_text().toStdString();
  const QPoint origin = grid->mapTo(&view, QPoint(0, 0));
  const QPoint inside_0 = origin + grid->block_rect(0).topLeft() + QPoint(4, grid->cell_size() / 2);
  const QPoint inside_1 = origin + grid->block_rect(1).topLeft() + QPoint(4, grid->cell_size() / 2);
  EXPECT_NE(windowed.pixel(inside_0), plain.pixel(inside_0));
  EXPECT_EQ(windowed.pixel(inside_1), plain.pixel(inside_1));
  EXPECT_EQ(outside_window_text({4, 3, 4}),
            "outside the sliding window: 3 of 4 layers are local and keep at most the last 4 tokens; only the global "
            "layers (1) still read it");
  EXPECT_TRUE(outside_window_text({4, 4, 4}).endsWith("no layer reads it any more"));
  view.set_sliding_window({});
  EXPECT_FALSE(grid->outside_window(0));
}

TEST_F(View, ColoursFollowOwnersNotNames) {
  view.update_from(paged_snapshot());
  // Two sessions with the same name (a rename, or a new one after a delete) keep their own colours.
  view.set_sequence_owners({{7, {"s1", "chat"}}, {9, {"s2", "chat"}}});
  const QImage before = render(view, "labels_before");
  const QPoint origin = view.grid()->mapTo(&view, QPoint(0, 0));
  const QPoint below_id(4, view.grid()->cell_size() - 5);  // under the block number
  const QPoint seq7 = origin + view.grid()->block_rect(1).topLeft() + below_id;
  const QPoint seq9 = origin + view.grid()->block_rect(5).topLeft() + below_id;
  EXPECT_NE(before.pixel(seq7), before.pixel(seq9));
  // Seq 9 becomes part of session s1 (a regenerated reply, say): it takes s1's colour.
  view.set_sequence_owners({{7, {"s1", "chat"}}, {9, {"s1", "chat"}}});
  const QImage after = render(view, "labels_after");
  EXPECT_EQ(after.pixel(seq9), before.pixel(seq7));
}

TEST_F(View, ContiguousWasteIsDrawnToScale) {
  view.update_from(contiguous_snapshot());
  BlockGrid* grid = view.grid();
  for (int32_t region : {0, 2}) {
    const QRectF used = grid->region_used_rect(region), waste = grid->region_waste_rect(region);
    const double filled = view.grid()->snapshot().blocks[region].filled / 100.0;
    const double total = used.width() + waste.width();
    EXPECT_NEAR(total, grid->block_rect(region).width(), 1e-6);
    EXPECT_NEAR(used.width() / total, filled, 1e-6) << region;
    EXPECT_NEAR(waste.width() / total, 1 - filled, 1e-6) << region;
    EXPECT_EQ(grid->block_at(waste.center().toPoint()), region);
  }
  EXPECT_TRUE(grid->region_waste_rect(1).isEmpty()) << "a free region wastes nothing";
  QTest::mouseClick(grid, Qt::LeftButton, {}, grid->region_waste_rect(2).center().toPoint());
  EXPECT_EQ(view.selected_sequence(), 2);
  EXPECT_EQ(view.selected_table(), (std::vector<std::pair<int32_t, int32_t>>{{0, 2}}));
  const QString tip = block_tooltip(grid->snapshot(), 0, {}, {});
  EXPECT_TRUE(tip.contains("reserved but unused: 75 (75%)")) << tip.toStdString();
  // The waste is red-hatched: many more reddish pixels in region 0's waste than in its used part.
  view.select_sequence(-1);
  const QImage image = render(view, "block_table_contiguous");
  auto reddish = [&](const QRectF& r) {
    int n = 0;
    const QPoint o = grid->mapTo(&view, QPoint(0, 0));
    for (int y = int(r.top()) + 2; y < int(r.bottom()) - 2; ++y)
      for (int x = int(r.left()) + 2; x < int(r.right()) - 2; ++x) {
        const QColor c = image.pixelColor(o + QPoint(x, y));
        n += c.red() > 180 && c.green() < 120;
      }
    return n;
  };
  EXPECT_GT(reddish(grid->region_waste_rect(0)), 50);
  EXPECT_EQ(reddish(grid->region_used_rect(0)), 0);
}

TEST_F(View, RegionCaptionsAndBarLabelsFitWhatTheyLabel) {
  // Regions of 1024 slots: one used a little, one free; the view from wide to narrow.
  KvSnapshot s = contiguous_snapshot();
  s.block_size = 1024;
  view.set_sequence_owners({{1, {"k1", "A session with a rather long name"}}});
  view.update_from(s);
  BlockGrid* grid = view.grid();
  std::map<int, QString> free_label;
  for (int width : {1400, 900, 640, 420}) {
    view.resize(width, 420);
    QApplication::processEvents();
    const QFontMetricsF fm(grid->region_font());
    for (int32_t r = 0; r < 4; ++r) {
      const QRect caption = grid->caption_rect(r);
      EXPECT_LE(fm.horizontalAdvance(grid->caption_text(r)), caption.width() + 0.5) << width << " region " << r;
      const QRectF bar = grid->block_rect(r);
      // The bar keeps most of the width and ends inside the grid.
      EXPECT_GE(bar.width(), (grid->width() - 2 * BlockGrid::kMargin) / 2) << width;
      EXPECT_LE(bar.right(), grid->width()) << width;
      for (const BarLabel& label : region_labels(fm, bar, s.blocks[static_cast<size_t>(r)], s.block_size)) {
        EXPECT_TRUE(bar.contains(label.area)) << width << " region " << r;
        EXPECT_LE(fm.horizontalAdvance(label.text) + 8, label.area.width()) << label.text.toStdString() << " at " << width;
        if (r == 1) free_label[width] = label.text;
      }
    }
    render(view, QString("block_table_regions_%1").arg(width));
  }
  // Narrow, a caption drops the session's name rather than being cut; a short one keeps its room to
  // the text, leaving the bars the rest.
  EXPECT_EQ(grid->caption_text(0), "region 0");
  view.resize(200, 420);
  QApplication::processEvents();
  EXPECT_EQ(grid->caption_text(0), "0");
  view.set_sequence_owners({{1, {"k1", "Story"}}});
  view.resize(900, 420);
  QApplication::processEvents();
  EXPECT_EQ(grid->caption_text(0), "region 0 · Story");
  EXPECT_LT(grid->caption_rect(0).width(), BlockGrid::kRegionLabelWidth - 20);
  // The whole caption where it fits, shorter ones as the bar narrows, never a cut one.
  EXPECT_EQ(free_label[1400], "free region (1024 token slots)");
  EXPECT_EQ(free_label[640], "free (1024 slots)");
  EXPECT_EQ(free_label[420], "free");
}

TEST(BlockLegendTest, ANarrowLegendWrapsItsWordsInsteadOfCuttingThem) {
  offscreen_app();
  BlockLegend legend;
  legend.show();
  legend.resize(600, 40);
  QApplication::processEvents();
  const int wide = legend.minimumHeight();
  legend.resize(90, wide);
  QApplication::processEvents();
  // Narrower than "shared (refs > 1)": its words go under one another, so it grows taller.
  EXPECT_GT(legend.minimumHeight(), 5 * 20 + 10) << "five items, one of them on two lines";
  legend.resize(90, legend.minimumHeight());
  QImage image(legend.size(), QImage::Format_RGB32);
  image.fill(Qt::white);
  legend.render(&image);
  // No text runs into the right edge: the last 3 columns are background only.
  for (int y = 0; y < image.height(); ++y)
    for (int x = image.width() - 3; x < image.width(); ++x)
      ASSERT_GT(qGray(image.pixel(x, y)), 200) << "ink at " << x << "," << y;
}

TEST_F(View, ThousandsOfBlocksShrinkThenScroll) {
  KvSnapshot many = paged_snapshot();
  many.blocks.resize(3000);
  view.update_from(many);
  QApplication::processEvents();
  BlockGrid* grid = view.grid();
  EXPECT_EQ(grid->cell_size(), BlockGrid::kMinCell);
  EXPECT_GT(grid->minimumHeight(), 420) << "taller than the view: it scrolls";
  EXPECT_EQ(grid->block_at(grid->block_rect(2999).center()), 2999);
  KvSnapshot some = paged_snapshot();
  some.blocks.resize(200);
  view.update_from(some);
  QApplication::processEvents();
  EXPECT_GT(grid->cell_size(), BlockGrid::kMinCell);
  EXPECT_LT(grid->cell_size(), BlockGrid::kMaxCell);
  const QRect last = grid->block_rect(199);
  EXPECT_LE(last.bottom(), grid->parentWidget()->height()) << "200 blocks fit without scrolling";
  render(view, "block_table_200");
}

TEST_F(View, ARemoteServerShowsItsReportedKvUsageInsteadOfBlocks) {
  view.update_from(paged_snapshot());
  view.select_sequence(7);
  view.show_remote("vLLM at http://10.0.0.2:8000", 0.42, 1000, 16);
  const QString hidden = "The server does not expose its block tables: individual blocks cannot be shown.";
  EXPECT_EQ(view.remote_text(), "vLLM at http://10.0.0.2:8000 reports KV usage 42% (of 1000 blocks of 16 tokens)\n" + hidden);
  EXPECT_TRUE(view.grid()->block_rect(0).isEmpty()) << "no blocks drawn";
  EXPECT_EQ(view.selected_sequence(), -1);
  EXPECT_FALSE(view.grid()->isVisible());
  render(view, "blocks_remote_usage");

  view.show_remote("llama.cpp at http://127.0.0.1:8080", std::nullopt, std::nullopt, std::nullopt);
  EXPECT_EQ(view.remote_text(), "llama.cpp at http://127.0.0.1:8080 does not report KV usage\n" + hidden);
  render(view, "blocks_remote_unreported");
  view.show_remote("s", 0.5, 64, std::nullopt);
  EXPECT_TRUE(view.remote_text().startsWith("s reports KV usage 50% (of 64 blocks)\n"));

  // Bad values are refused, named.
  EXPECT_THROW(view.show_remote("s", 1.5, std::nullopt, std::nullopt), std::invalid_argument);
  EXPECT_THROW(view.show_remote("s", std::nan(""), std::nullopt, std::nullopt), std::invalid_argument);
  try {
    view.show_remote("s", 0.1, 0, 16);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "KV blocks total must be positive, got 0");
  }

  // The local engine again: its blocks, no remote text.
  view.update_from(paged_snapshot());
  EXPECT_EQ(view.remote_text(), "");
  EXPECT_TRUE(view.grid()->isVisible());
  EXPECT_FALSE(view.grid()->block_rect(11).isEmpty());
  EXPECT_TRUE(view.summary_text().startsWith("paged · 12 blocks")) << view.summary_text().toStdString();
}

}  // namespace
}  // namespace inferscope::gui::test
