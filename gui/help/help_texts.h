// "What is this?" for every chart and every number the window shows, in one table: each entry says
// what the figure is, its unit, whether it counts one request or the whole engine, and what moves
// it. Plot titles and tooltips, the "?" buttons and the status bar's tooltips all read from here.
#pragma once
#include <QString>
#include <string_view>
#include <vector>

namespace inferscope::gui {

struct HelpText {
  const char* key;     // the plot's objectName, or a status / chat figure's name ("status_kv")
  QString title;       // the chart's title, or the figure's name
  QString definition;  // what it is (and the engine metric it comes from)
  QString unit;
  QString scope;       // per request, per step, or the engine's total over every request
  QString moves;       // what makes it rise or fall
};

// Every entry, in the order the window shows them.
const std::vector<HelpText>& help_texts();
// The entry named `key`; throws std::out_of_range naming it when there is none.
const HelpText& help_text(std::string_view key);
// The entry as rich text for a tooltip or the "?" popup: title, definition, unit, scope, what moves it.
QString help_html(const HelpText& help);

}  // namespace inferscope::gui
