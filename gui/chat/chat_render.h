// Turns a conversation into the rich text the chat view shows: Markdown-ish replies (fenced code
// blocks, inline code, bold) or the per-token view, a role header per turn and each reply's
// measurements under it.
#pragma once
#include <QString>

#include "gui/chat/chat_session.h"

namespace inferscope::gui {

// Escaped HTML for one message: ``` fences become code blocks (an unclosed fence, as while a reply
// streams, runs to the end), `x` inline code, **x** bold, newlines line breaks.
QString markdown_to_html(const QString& text);
// One line under a reply: "42 tokens · this reply: 38.1 tok/s decode · TTFT 0.12 s · stop" (the
// request's own decode speed; the engine's, over every request, is in the status bar).
// How a reply ended, in words ("stop" from the engine reads "ended by the model").
QString finish_reason_text(const std::string& reason);
QString reply_stats_line(const ReplyStats& stats);
// The whole conversation (each reply's line has its help as tooltip); `streaming` marks the last reply as still coming. `token_view` shows each
// reply that has a trace token by token (token_view.h) instead of as Markdown.
QString conversation_html(const ChatSession& session, bool streaming, bool token_view);

}  // namespace inferscope::gui
