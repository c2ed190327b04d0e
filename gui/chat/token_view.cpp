#include "gui/chat/token_view.h"

#include <QStringList>
#include <array>

namespace inferscope::gui {
namespace {

struct Look {
  const char* name;  // in the legend and the counts
  const char* tones[2];
};

// Indexed by TokenOrigin, then the refused drafts.
constexpr std::array<Look, 5> kLooks{{
    {"plain", {"#e5e7eb", "#f3f4f6"}},
    {"accepted draft", {"#bbf7d0", "#dcfce7"}},
    {"corrected", {"#fed7aa", "#ffedd5"}},
    {"bonus", {"#bfdbfe", "#dbeafe"}},
    {"refused draft", {"#fee2e2", "#fee2e2"}},
}};
constexpr size_t kRefused = 4;

size_t look_of(const TracedToken& t) { return t.refused ? kRefused : static_cast<size_t>(t.origin); }

QString prob(const char* name, float value) { return QString(" · %1 = %2").arg(name).arg(value, 0, 'f', 3); }

// A token's text as HTML inside a pre-wrap block: escaped, line breaks as <br>; a refused draft's
// line break is only a mark (the reply has no break there).
QString token_html(const TracedToken& t) {
  return QString::fromStdString(t.text).toHtmlEscaped().replace('\n', t.refused ? "↵" : "<br>");
}

}  // namespace

QString token_tooltip(const TracedToken& t) {
  if (t.refused) return "refused draft: the target did not take it" + prob("p(x)", t.p) + prob("q(x)", t.q);
  switch (t.origin) {
    case TokenOrigin::Accepted: return "accepted draft" + prob("p(x)", t.p) + prob("q(x)", t.q);
    case TokenOrigin::Corrected: return "corrected: the target's own token after it refused a draft" + prob("p(x)", t.p);
    case TokenOrigin::Bonus: return "bonus: the target's own token after every draft passed" + prob("p(x)", t.p);
    case TokenOrigin::Plain: break;
  }
  return "plain: decoded without a draft";
}

QString token_view_html(const std::vector<TracedToken>& tokens) {
  QString html = "<div style=\"white-space:pre-wrap;\">";
  std::array<int, kLooks.size()> counts{};
  for (size_t i = 0; i < tokens.size(); ++i) {
    const TracedToken& t = tokens[i];
    const size_t look = look_of(t);
    ++counts[look];
    if (t.text.empty()) continue;  // an incomplete character or held-back text: nothing to show
    const QString style = QString("background-color:%1;").arg(kLooks[look].tones[i % 2]) +
                          (t.refused ? "color:#b91c1c; text-decoration:line-through;" : "");
    html += QString("<span style=\"%1\" title=\"%2\">%3</span>")
                .arg(style, token_tooltip(t).toHtmlEscaped(), token_html(t));
  }
  QStringList parts;
  for (size_t look = 0; look < kLooks.size(); ++look) {
    if (counts[look] > 0) parts << QString("%1 %2").arg(kLooks[look].name).arg(counts[look]);
  }
  return html + "</div><div style=\"color:#6b7280; font-size:small; margin-top:2px;\">" + parts.join(" · ") + "</div>";
}

QString token_view_legend() {
  QStringList keys;
  for (const Look& look : kLooks) {
    const bool refused = &look == &kLooks[kRefused];
    keys << QString("<span style=\"background-color:%1;%2\">&nbsp;%3&nbsp;</span>")
                .arg(look.tones[0], refused ? " color:#b91c1c; text-decoration:line-through;" : "", look.name);
  }
  return "<span style=\"font-size:small; color:#374151;\">" + keys.join(" ") + " &nbsp;hover: p(x), q(x)</span>";
}

}  // namespace inferscope::gui
