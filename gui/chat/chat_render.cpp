#include "gui/chat/chat_render.h"

#include <QRegularExpression>
#include <QStringList>

#include "gui/chat/token_view.h"
#include "gui/help/help_texts.h"

namespace inferscope::gui {
namespace {

// Inline markup of one escaped line of prose.
QString inline_markup(const QString& escaped) {
  static const QRegularExpression code("`([^`]+)`");
  static const QRegularExpression bold("\\*\\*([^*]+)\\*\\*");
  QString s = escaped;
  s.replace(code, "<code style=\"background-color:#eef1f5; color:#8a1538;\">\\1</code>");
  s.replace(bold, "<b>\\1</b>");
  return s;
}

QString code_block(const QString& language, const QStringList& lines) {
  QString html = "<table width=\"100%\" cellpadding=\"8\" cellspacing=\"0\" style=\"margin-top:4px; margin-bottom:4px;\">"
                 "<tr><td style=\"background-color:#1e2430; color:#e6e9ef;\">";
  if (!language.isEmpty()) html += "<div style=\"color:#8b96a8; font-size:small;\">" + language.toHtmlEscaped() + "</div>";
  html += "<pre style=\"font-family:monospace; margin:0;\">" + lines.join("\n").toHtmlEscaped() + "</pre></td></tr></table>";
  return html;
}

}  // namespace

QString markdown_to_html(const QString& text) {
  QString html;
  QStringList prose, code;
  QString language;
  bool in_code = false;
  auto flush_prose = [&] {
    if (prose.isEmpty()) return;
    QStringList lines;
    for (const QString& line : prose) lines.append(inline_markup(line.toHtmlEscaped()));
    html += lines.join("<br>");
    prose.clear();
  };
  for (const QString& line : text.split('\n')) {
    if (line.trimmed().startsWith("```")) {
      if (in_code) {
        html += code_block(language, code);
        code.clear();
      } else {
        flush_prose();
        language = line.trimmed().mid(3).trimmed();
      }
      in_code = !in_code;
      continue;
    }
    (in_code ? code : prose).append(line);
  }
  if (in_code) html += code_block(language, code);
  flush_prose();
  return html;
}

QString finish_reason_text(const std::string& reason) {
  if (reason == "stop") return QStringLiteral("ended by the model");
  if (reason == "length") return QStringLiteral("cut off at the reply's token limit");
  if (reason == "abort") return QStringLiteral("stopped by you");
  if (reason == "error") return QStringLiteral("failed");
  return QString::fromStdString(reason);
}

QString reply_stats_line(const ReplyStats& s) {
  QStringList parts;
  parts << QString("%1 tokens").arg(s.tokens);
  if (s.tokens > 1) parts << QString("this reply: %1 tok/s decode").arg(s.tokens_per_second, 0, 'f', 1);
  if (s.ttft_s >= 0) parts << QString("TTFT %1 s").arg(s.ttft_s, 0, 'f', 2);
  if (!s.finish_reason.empty()) parts << finish_reason_text(s.finish_reason);
  return parts.join(" · ");
}

QString conversation_html(const ChatSession& session, bool streaming, bool token_view) {
  QString html = "<html><body style=\"font-size:10pt;\">";
  if (!session.system_prompt.empty()) {
    html += "<p style=\"color:#6b7280;\"><i>System: " + QString::fromStdString(session.system_prompt).toHtmlEscaped() +
            "</i></p>";
  }
  for (size_t i = 0; i < session.messages.size(); ++i) {
    const SessionMessage& m = session.messages[i];
    const bool user = m.role == "user";
    const bool live = streaming && i + 1 == session.messages.size() && !user;
    html += QString("<table width=\"100%\" cellpadding=\"8\" cellspacing=\"0\" style=\"margin-bottom:6px;\"><tr><td "
                    "style=\"background-color:%1; border-left:3px solid %2;\">")
                .arg(user ? "#eef4ff" : "#f7f7f8", user ? "#3b82f6" : "#10b981");
    html += QString("<span style=\"color:%1; font-weight:bold; font-size:small;\">%2</span><br>")
                .arg(user ? "#1d4ed8" : "#047857", user ? "You" : "Assistant");
    if (!m.note.empty()) {
      // How this turn was sent (what the context policy left out, a greedy repeat), above the reply.
      html += "<div style=\"color:#92400e; font-size:small; margin-bottom:4px;\">" +
              QString::fromStdString(m.note).toHtmlEscaped() + "</div>";
    }
    if (!m.reasoning.empty()) {
      // The server's reasoning, apart from and above the answer, muted.
      html += "<div style=\"color:#6b7280; font-style:italic; border-left:2px solid #d1d5db; padding-left:6px; margin-bottom:4px;\">"
              "<span style=\"font-size:small; font-weight:bold;\">Reasoning</span><br>" +
              QString::fromStdString(m.reasoning).toHtmlEscaped().replace("\n", "<br>") + "</div>";
    }
    html += token_view && !m.tokens.empty() ? token_view_html(m.tokens) : markdown_to_html(QString::fromStdString(m.content));
    if (live) html += "<span style=\"color:#10b981;\"> ▍</span>";
    if (!user && !live) {
      // Hovering the line shows what its figures are (this reply's own, not the engine's).
      html += "<div style=\"color:#6b7280; font-size:small; margin-top:4px;\"><span title=\"" +
              help_html(help_text("reply_stats")).toHtmlEscaped() + "\">" + reply_stats_line(m.stats) + "</span></div>";
    }
    html += "</td></tr></table>";
  }
  return html + "</body></html>";
}

}  // namespace inferscope::gui
