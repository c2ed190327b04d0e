// The block-table view, the teaching centrepiece: every physical KV block (paged) as a cell coloured
// by its owning sequence, shaded by fill, outlined when shared and hatched when cached-free; or, for a
// contiguous cache, every reserved region as a bar whose unused part is hatched as waste. Selecting a
// sequence highlights its blocks and lists its logical -> physical table beside the grid. For a remote
// server, whose block tables are not exposed, it says what KV usage the server reports instead.
#pragma once
#include <QString>
#include <QWidget>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "core/kv/kv_cache.h"
#include "gui/blocks/window_blocks.h"

class BlockGrid;

// Who owns a sequence: a stable key that picks its colour (the chat session's id) and the name shown.
struct SequenceOwner {
  QString key;
  QString name;
};

class BlockTableView : public QWidget {
  Q_OBJECT
 public:
  explicit BlockTableView(QWidget* parent = nullptr);
  ~BlockTableView() override;
  // The local engine's cache (also leaves a remote server's page).
  void update_from(const inferscope::KvSnapshot& snapshot);
  // A remote server named `source` ("llama.cpp at http://127.0.0.1:8080"): no blocks, and centred
  // "SOURCE reports KV usage 42% (of N blocks of B tokens)" or "SOURCE does not report KV usage", with
  // why no block can be shown. Unknown values are nullopt; bad ones throw std::invalid_argument
  // naming them (gui/blocks/remote_kv_text.h). update_from() returns to the grid.
  void show_remote(const QString& source, std::optional<double> usage_fraction, std::optional<int> blocks_total,
                   std::optional<int> block_size);
  // A line under show_remote()'s usage about the server's own units ("slot 0: 58 of 512 tokens · …");
  // empty hides it.
  void set_remote_detail(const QString& text);
  // Who owns each sequence (by sequence id); colours follow the owner's key, never its name, so two
  // sessions with the same name keep apart and a renamed one keeps its colour. A sequence with no
  // owner is labelled with its client (KvSnapshot::Sequence::client, a served request's) if any.
  void set_sequence_owners(const std::map<int32_t, SequenceOwner>& owners);
  // Turns token ids into text for the hover tooltip (the app passes the model's tokenizer).
  void set_token_decoder(std::function<QString(std::span<const int32_t>)> decode);
  void select_sequence(int32_t seq);   // highlights its blocks and lists its logical->physical table; -1: none
  // The loaded model's sliding window (window 0: none): paged blocks wholly outside it are veiled,
  // counted in the header and explained in their tooltip.
  void set_sliding_window(const inferscope::gui::SlidingWindowInfo& window);

  // Queries (tests, screenshots): the painted grid, the selection, the header and the selection's table
  // as (logical, physical).
  BlockGrid* grid() const;
  int32_t selected_sequence() const;
  QString summary_text() const;  // the header over the grid: "paged · 182 blocks × 16 tokens · ..."
  QString remote_text() const;   // show_remote()'s lines (and the detail, if any) while it is shown, else ""
  std::vector<std::pair<int32_t, int32_t>> selected_table() const;

 signals:
  void sequence_selected(int32_t seq);  // -1 when the selection was cleared

 private:
  struct Impl;
  std::unique_ptr<Impl> d_;
};
