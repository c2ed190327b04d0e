// The chat's per-token view of a reply: each token on the colour of how it came about (accepted
// draft, corrected after a refusal, bonus, plain), consecutive tokens in two tones so their
// boundaries show, refused drafts struck through where the target refused them, and p(x) / q(x) in
// each token's tooltip.
#pragma once
#include <QString>
#include <vector>

#include "gui/chat/token_trace.h"

namespace inferscope::gui {

// One token's tooltip: "accepted draft · p(x) = 0.912 · q(x) = 0.874".
QString token_tooltip(const TracedToken& token);
// The reply as coloured tokens, with a line counting each origin under it.
QString token_view_html(const std::vector<TracedToken>& tokens);
// The key to the colours (rich text for a label above the conversation).
QString token_view_legend();

}  // namespace inferscope::gui
