// A file path to type or browse for (the draft model of speculative decoding): a line edit and a
// "…" button that opens a file dialog. changed() fires when an edit ends on a new path or a file is
// chosen, never while typing.
#pragma once
#include <QString>
#include <QWidget>

class QLineEdit;
class QToolButton;

namespace inferscope::gui {

class FilePicker : public QWidget {
  Q_OBJECT
 public:
  // `title` and `filter` are the file dialog's ("GGUF models (*.gguf)").
  FilePicker(const QString& title, const QString& filter, QWidget* parent = nullptr);
  QString path() const;
  // Shows `path` without emitting changed().
  void set_path(const QString& path);
  QLineEdit* edit() const { return edit_; }

 signals:
  void changed();

 private:
  void take(const QString& path);  // emits changed() when `path` is new

  QString title_, filter_, applied_;
  QLineEdit* edit_;
  QToolButton* browse_;
};

}  // namespace inferscope::gui
