// The key under the block grid: a sample of each kind of cell (paged) or bar part (contiguous), drawn
// with the grid's own painting code, wrapped over as many lines as the width needs.
#pragma once
#include <QWidget>

class BlockLegend : public QWidget {
  Q_OBJECT
 public:
  explicit BlockLegend(QWidget* parent = nullptr);
  void set_contiguous(bool contiguous);
  // Adds the sample of a block outside the local layers' sliding window (paged, a windowed model).
  void set_window(bool window);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  int lay_out(QPainter* p);  // paints when p is given; returns the height used
  bool contiguous_ = false;
  bool window_ = false;
};
