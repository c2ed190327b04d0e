#include "gui/blocks/block_table_view.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QPainter>
#include <QScrollArea>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>

#include "gui/blocks/block_grid.h"
#include "gui/blocks/block_legend.h"
#include "gui/blocks/block_tooltip.h"
#include "gui/blocks/remote_kv_text.h"
#include "gui/blocks/sequence_palette.h"

using inferscope::KvSnapshot;
using inferscope::SeqId;
using namespace inferscope::gui;

namespace {

// A scroll area that tells the grid how much height it can fit its cells into.
class FitScrollArea : public QScrollArea {
 public:
  FitScrollArea(BlockGrid* grid, QWidget* parent) : QScrollArea(parent), grid_(grid) {
    setWidget(grid);
    setWidgetResizable(true);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setFrameShape(QFrame::StyledPanel);
  }

 protected:
  void resizeEvent(QResizeEvent* event) override {
    QScrollArea::resizeEvent(event);
    grid_->set_fit_height(viewport()->height());
  }

 private:
  BlockGrid* grid_;
};

QIcon swatch(QColor c) {
  QPixmap pm(12, 12);
  pm.fill(c);
  QPainter p(&pm);
  p.setPen(c.darker(140));
  p.drawRect(0, 0, 11, 11);
  return QIcon(pm);
}

QString summary_of(const KvSnapshot& s) {
  if (s.blocks.empty()) return QObject::tr("KV cache: no snapshot yet");
  if (s.kind == "contiguous") {
    int32_t in_use = 0;
    int64_t used = 0;
    for (const KvSnapshot::Block& r : s.blocks)
      if (!r.owners.empty()) ++in_use, used += r.filled;
    const int64_t reserved = int64_t{in_use} * s.block_size;
    return QObject::tr("contiguous · %1 regions × %2 token slots · %3 in use · %4 of %5 reserved slots filled · "
                       "reserved but unused: %6 (%7%)")
        .arg(s.blocks.size())
        .arg(s.block_size)
        .arg(in_use)
        .arg(used)
        .arg(reserved)
        .arg(reserved - used)
        .arg(reserved > 0 ? 100.0 * double(reserved - used) / double(reserved) : 0.0, 0, 'f', 0);
  }
  int32_t used = 0, shared = 0, cached = 0;
  for (const KvSnapshot::Block& b : s.blocks) {
    used += b.ref_count > 0;
    shared += b.ref_count > 1;
    cached += b.ref_count == 0 && b.cached;
  }
  return QObject::tr("paged · %1 blocks × %2 tokens · %3 used · %4 shared · %5 cached · %6 free · %7 sequences")
      .arg(s.blocks.size())
      .arg(s.block_size)
      .arg(used)
      .arg(shared)
      .arg(cached)
      .arg(static_cast<int32_t>(s.blocks.size()) - used - cached)
      .arg(s.sequences.size());
}

// The page shown for a remote server: its KV usage line over why no block is drawn, centred.
QWidget* make_remote_page(QWidget* parent, QLabel** usage, QLabel** detail, QLabel** hidden) {
  auto* page = new QWidget(parent);
  auto* layout = new QVBoxLayout(page);
  layout->setContentsMargins(24, 24, 24, 24);
  *usage = new QLabel(page);
  *detail = new QLabel(page);
  *hidden = new QLabel(remote_blocks_hidden_text(), page);
  QFont big = page->font();
  big.setPointSizeF(big.pointSizeF() * 1.4);
  big.setBold(true);
  (*usage)->setFont(big);
  for (QLabel* label : {*usage, *detail, *hidden}) {
    label->setAlignment(Qt::AlignCenter);
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  }
  QFont reason = page->font();
  reason.setPointSizeF(reason.pointSizeF() * 1.1);
  (*hidden)->setFont(reason);
  layout->addStretch(1);
  layout->addWidget(*usage);
  layout->addWidget(*detail);
  (*detail)->setVisible(false);
  layout->addSpacing(12);
  layout->addWidget(*hidden);
  layout->addStretch(1);
  return page;
}

}  // namespace

struct BlockTableView::Impl {
  BlockGrid* grid = nullptr;
  BlockLegend* legend = nullptr;
  QLabel* summary = nullptr;
  QListWidget* sequences = nullptr;
  QLabel* table_title = nullptr;
  QTableWidget* table = nullptr;
  QStackedWidget* pages = nullptr;  // the grid and tables, or the remote server's page
  QWidget* remote_page = nullptr;
  QLabel* remote_usage = nullptr;
  QLabel* remote_detail = nullptr;
  QLabel* remote_hidden = nullptr;

  KvSnapshot snapshot;
  std::map<int32_t, SequenceOwner> owners;
  std::function<QString(std::span<const int32_t>)> decode;
  SequencePalette palette;
  SeqId selected = -1;
  SlidingWindowInfo window;

  // Its owner's name (a chat session), else the client that asked for it (a served request), else its id.
  QString label_of(SeqId id) const {
    if (auto it = owners.find(id); it != owners.end()) return it->second.name;
    const KvSnapshot::Sequence* seq = find(id);
    return seq && !seq->client.empty() ? QString::fromStdString(seq->client) : QStringLiteral("request %1").arg(id);
  }
  // Owned sequences take their owner's colour; the prefixes keep owner keys and bare ids apart.
  QColor color_of(SeqId id) {
    auto it = owners.find(id);
    return palette.color_for(it != owners.end() ? QStringLiteral("owner:") + it->second.key : QStringLiteral("seq:%1").arg(id));
  }
  const KvSnapshot::Sequence* find(SeqId id) const {
    for (const KvSnapshot::Sequence& s : snapshot.sequences)
      if (s.id == id) return &s;
    return nullptr;
  }
  void redraw();
  void fill_sequence_list();
  void fill_table();
};

void BlockTableView::Impl::redraw() {
  std::map<SeqId, QColor> colors;
  std::map<SeqId, QString> names;
  for (const KvSnapshot::Sequence& s : snapshot.sequences) {
    colors[s.id] = color_of(s.id);
    names[s.id] = label_of(s.id);
  }
  if (selected >= 0 && !find(selected)) selected = -1;  // its request finished
  grid->set_region_labels(std::move(names));
  grid->set_snapshot(snapshot, std::move(colors));
  grid->set_selected(selected);
  std::vector<bool> outside_window = blocks_outside_window(snapshot, window.window);
  const auto outside = std::count(outside_window.begin(), outside_window.end(), true);
  grid->set_outside_window(std::move(outside_window));
  legend->set_contiguous(snapshot.kind == "contiguous");
  legend->set_window(window.window > 0);
  QString header = summary_of(snapshot);
  if (outside > 0) header += QObject::tr(" · %1 outside the local layers' %2-token window").arg(outside).arg(window.window);
  summary->setText(header);
  fill_sequence_list();
  fill_table();
}

void BlockTableView::Impl::fill_sequence_list() {
  const QSignalBlocker block(sequences);  // rebuilding is not the user selecting
  sequences->clear();
  for (const KvSnapshot::Sequence& s : snapshot.sequences) {
    const QString text = QObject::tr("%1 · seq %2 — %3 tokens, %4 %5")
                             .arg(label_of(s.id))
                             .arg(s.id)
                             .arg(s.length)
                             .arg(s.block_table.size())
                             .arg(snapshot.kind == "contiguous" ? QObject::tr("region") : QObject::tr("blocks"));
    auto* item = new QListWidgetItem(swatch(color_of(s.id)), text);
    item->setToolTip(text);  // the list elides what its width cannot hold
    item->setData(Qt::UserRole, s.id);
    sequences->addItem(item);
    if (s.id == selected) item->setSelected(true);
  }
}

void BlockTableView::Impl::fill_table() {
  const KvSnapshot::Sequence* seq = find(selected);
  table->setRowCount(seq ? static_cast<int>(seq->block_table.size()) : 0);
  if (!seq) {
    table_title->setText(QObject::tr("Select a sequence (click a block) to see its block table."));
    return;
  }
  table_title->setText(QObject::tr("Block table of %1 (seq %2): %3 tokens → %4 physical %5")
                           .arg(label_of(seq->id))
                           .arg(seq->id)
                           .arg(seq->length)
                           .arg(seq->block_table.size())
                           .arg(snapshot.kind == "contiguous" ? QObject::tr("region") : QObject::tr("blocks")));
  for (int i = 0; i < static_cast<int>(seq->block_table.size()); ++i) {
    const int32_t physical = seq->block_table[static_cast<size_t>(i)];
    const bool known = physical >= 0 && static_cast<size_t>(physical) < snapshot.blocks.size();
    const KvSnapshot::Block* b = known ? &snapshot.blocks[static_cast<size_t>(physical)] : nullptr;
    const QStringList cells = {QString::number(i), QString::number(physical),
                               b ? QStringLiteral("%1/%2").arg(b->filled).arg(snapshot.block_size) : QString(),
                               b && b->ref_count > 1 ? QStringLiteral("×%1").arg(b->ref_count) : QString()};
    for (int c = 0; c < cells.size(); ++c) {
      auto* item = table->item(i, c);
      if (!item) table->setItem(i, c, item = new QTableWidgetItem);
      item->setText(cells[c]);
      item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    }
  }
}

BlockTableView::BlockTableView(QWidget* parent) : QWidget(parent), d_(std::make_unique<Impl>()) {
  Impl& d = *d_;
  d.pages = new QStackedWidget(this);
  auto* splitter = new QSplitter(Qt::Horizontal, d.pages);
  d.pages->addWidget(splitter);
  d.remote_page = make_remote_page(d.pages, &d.remote_usage, &d.remote_detail, &d.remote_hidden);
  d.pages->addWidget(d.remote_page);
  auto* outer = new QHBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  outer->addWidget(d.pages);

  auto* left = new QWidget(splitter);
  auto* left_layout = new QVBoxLayout(left);
  left_layout->setContentsMargins(2, 2, 2, 2);
  d.summary = new QLabel(left);
  d.summary->setWordWrap(true);
  d.summary->setToolTip(tr("Paged: KV lives in fixed blocks handed out on demand, so a sequence wastes at most one "
                           "partly filled block. Contiguous: each request reserves room for its whole context up "
                           "front; the hatched part of each bar is reserved but unused."));
  d.grid = new BlockGrid;
  d.legend = new BlockLegend(left);
  left_layout->addWidget(d.summary);
  left_layout->addWidget(new FitScrollArea(d.grid, left), 1);
  left_layout->addWidget(d.legend);

  auto* right = new QWidget(splitter);
  right->setMinimumWidth(260);
  auto* right_layout = new QVBoxLayout(right);
  right_layout->setContentsMargins(2, 2, 2, 2);
  right_layout->addWidget(new QLabel(tr("Sequences"), right));
  d.sequences = new QListWidget(right);
  d.sequences->setToolTip(tr("Every sequence in the cache, coloured as in the grid; click one to highlight its blocks."));
  d.sequences->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  d.sequences->setTextElideMode(Qt::ElideRight);
  right_layout->addWidget(d.sequences, 1);
  d.table_title = new QLabel(right);
  d.table_title->setWordWrap(true);
  right_layout->addWidget(d.table_title);
  d.table = new QTableWidget(0, 4, right);
  d.table->setHorizontalHeaderLabels({tr("logical"), tr("physical"), tr("filled"), tr("shared")});
  d.table->verticalHeader()->setVisible(false);
  // The columns share the width, but "filled" is as wide as its figures ("184/1024" for a region).
  d.table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  d.table->horizontalHeader()->setSectionResizeMode(2, QHeaderView::ResizeToContents);
  d.table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  d.table->setSelectionMode(QAbstractItemView::NoSelection);
  d.table->setToolTip(tr("The selected sequence's block table: logical block i (tokens i×block_size onward) is "
                         "stored in this physical block. Attention reads K/V through it."));
  right_layout->addWidget(d.table, 2);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 1);

  d.grid->set_tooltip_text([this](int32_t block) {
    QString text = block_tooltip(d_->snapshot, block, [this](SeqId id) { return d_->label_of(id); }, d_->decode);
    if (d_->grid->outside_window(block)) text += QLatin1Char('\n') + outside_window_text(d_->window);
    return text;
  });
  connect(d.grid, &BlockGrid::block_clicked, this, [this](int32_t block) {
    if (block < 0) return select_sequence(-1);
    const std::vector<SeqId>& owners = d_->snapshot.blocks[static_cast<size_t>(block)].owners;
    if (owners.empty()) return select_sequence(-1);
    // Clicking a shared block again moves the selection on to its next owner.
    auto it = std::find(owners.begin(), owners.end(), d_->selected);
    select_sequence(it == owners.end() || std::next(it) == owners.end() ? owners.front() : *std::next(it));
  });
  connect(d.sequences, &QListWidget::itemClicked, this,
          [this](QListWidgetItem* item) { select_sequence(item->data(Qt::UserRole).toInt()); });
  d.redraw();
}

BlockTableView::~BlockTableView() = default;

void BlockTableView::update_from(const KvSnapshot& snapshot) {
  d_->snapshot = snapshot;
  d_->redraw();
  d_->pages->setCurrentIndex(0);
}

void BlockTableView::show_remote(const QString& source, std::optional<double> usage_fraction, std::optional<int> blocks_total,
                                 std::optional<int> block_size) {
  d_->remote_usage->setText(remote_kv_usage_text(source, usage_fraction, blocks_total, block_size));
  select_sequence(-1);
  d_->snapshot = KvSnapshot{};  // no local blocks behind the page
  d_->redraw();
  d_->pages->setCurrentWidget(d_->remote_page);
}

void BlockTableView::set_sequence_owners(const std::map<int32_t, SequenceOwner>& owners) {
  d_->owners = owners;
  d_->redraw();
}

void BlockTableView::set_sliding_window(const SlidingWindowInfo& window) {
  d_->window = window;
  d_->redraw();
}

void BlockTableView::set_token_decoder(std::function<QString(std::span<const int32_t>)> decode) {
  d_->decode = std::move(decode);
}

void BlockTableView::select_sequence(int32_t seq) {
  if (seq >= 0 && !d_->find(seq)) seq = -1;  // not in the cache: nothing to highlight
  if (seq == d_->selected) return;
  d_->selected = seq;
  d_->grid->set_selected(seq);
  d_->fill_sequence_list();
  d_->fill_table();
  emit sequence_selected(seq);
}

BlockGrid* BlockTableView::grid() const { return d_->grid; }
int32_t BlockTableView::selected_sequence() const { return d_->selected; }
QString BlockTableView::summary_text() const { return d_->summary->text(); }

QString BlockTableView::remote_text() const {
  if (d_->pages->currentWidget() != d_->remote_page) return {};
  const QString detail = d_->remote_detail->text().isEmpty() ? QString() : d_->remote_detail->text() + QLatin1Char('\n');
  return d_->remote_usage->text() + QLatin1Char('\n') + detail + d_->remote_hidden->text();
}

void BlockTableView::set_remote_detail(const QString& text) {
  d_->remote_detail->setText(text);
  d_->remote_detail->setVisible(!text.isEmpty());
}

std::vector<std::pair<int32_t, int32_t>> BlockTableView::selected_table() const {
  std::vector<std::pair<int32_t, int32_t>> table;
  if (const KvSnapshot::Sequence* seq = d_->find(d_->selected))
    for (size_t i = 0; i < seq->block_table.size(); ++i) table.emplace_back(static_cast<int32_t>(i), seq->block_table[i]);
  return table;
}
