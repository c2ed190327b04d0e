// The block-table view, the teaching centrepiece: every physical KV block (paged) as a cell coloured
// by its owning sequence, shaded by fill, outlined when shared and hatched when cached-free; or, for a
// contiguous cache, every reserved region as a bar whose unused part is hatched as waste. Selecting a
// sequence highlights its blocks and lists its logical -> physical table beside the grid.
#pragma once
#include <QString>
#include <QWidget>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "core/kv/kv_cache.h"

class BlockGrid;

class BlockTableView : public QWidget {
  Q_OBJECT
 public:
  explicit BlockTableView(QWidget* parent = nullptr);
  ~BlockTableView() override;
  void update_from(const inferscope::KvSnapshot& snapshot);
  // Who owns each sequence (a request id -> the chat session's name); colours follow the label.
  void set_sequence_labels(const std::map<int32_t, QString>& labels);
  // Turns token ids into text for the hover tooltip (the app passes the model's tokenizer).
  void set_token_decoder(std::function<QString(std::span<const int32_t>)> decode);
  void select_sequence(int32_t seq);   // highlights its blocks and lists its logical->physical table; -1: none

  // Queries (tests, screenshots): the painted grid, the selection and its table as (logical, physical).
  BlockGrid* grid() const;
  int32_t selected_sequence() const;
  std::vector<std::pair<int32_t, int32_t>> selected_table() const;

 signals:
  void sequence_selected(int32_t seq);  // -1 when the selection was cleared

 private:
  struct Impl;
  std::unique_ptr<Impl> d_;
};
