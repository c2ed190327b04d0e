// The notice a guessed chat template gets wherever the model shows (the chat, the Model tab): an
// amber line with LlamaModel::chat_template_notice's sentences, hidden when there is nothing to say.
#pragma once
#include <string>

class QLabel;

namespace inferscope::gui {

// A word-wrapped amber label named "template_notice", hidden.
QLabel* template_notice_label();
// Shows `notice` on the label, or hides it when `notice` is empty.
void show_template_notice(QLabel& label, const std::string& notice);

}  // namespace inferscope::gui
