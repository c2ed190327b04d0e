#include "gui/config/file_picker.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QToolButton>

namespace inferscope::gui {

FilePicker::FilePicker(const QString& title, const QString& filter, QWidget* parent)
    : QWidget(parent), title_(title), filter_(filter), edit_(new QLineEdit), browse_(new QToolButton) {
  edit_->setPlaceholderText("choose a file…");
  browse_->setText("…");
  browse_->setToolTip(title);
  auto* row = new QHBoxLayout(this);
  row->setContentsMargins(0, 0, 0, 0);
  row->setSpacing(2);
  row->addWidget(edit_, 1);
  row->addWidget(browse_);
  connect(edit_, &QLineEdit::editingFinished, this, [this] { take(edit_->text().trimmed()); });
  connect(browse_, &QToolButton::clicked, this, [this] {
    const QString start = applied_.isEmpty() ? QString() : QFileInfo(applied_).path();
    const QString chosen = QFileDialog::getOpenFileName(this, title_, start, filter_ + ";;All files (*)");
    if (chosen.isEmpty()) return;
    edit_->setText(chosen);
    take(chosen);
  });
}

QString FilePicker::path() const { return edit_->text().trimmed(); }

void FilePicker::set_path(const QString& path) {
  edit_->setText(path);
  applied_ = path;
}

void FilePicker::take(const QString& path) {
  if (path == applied_) return;
  applied_ = path;
  emit changed();
}

}  // namespace inferscope::gui
