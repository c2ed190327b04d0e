#include "gui/model/template_notice.h"

#include <QLabel>

namespace inferscope::gui {

QLabel* template_notice_label() {
  auto* label = new QLabel;
  label->setObjectName("template_notice");
  label->setWordWrap(true);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  label->setStyleSheet("color:#92400e; background:#fffbeb; border:1px solid #fcd34d; padding:4px; border-radius:3px;");
  label->setVisible(false);
  return label;
}

void show_template_notice(QLabel& label, const std::string& notice) {
  label.setText(QString::fromStdString(notice));
  label.setVisible(!notice.empty());
}

}  // namespace inferscope::gui
