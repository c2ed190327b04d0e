// The colours of the quantities several charts share, so a prefill is the same orange in the
// tokens-per-step bars, the roofline and the request timeline.
#pragma once
#include <QColor>

namespace inferscope::gui {

inline const QColor kTtftColor(31, 119, 180);
inline const QColor kDecodeColor(44, 160, 44);
inline const QColor kPrefillColor(255, 127, 14);
inline const QColor kWaitingColor(190, 190, 196);
inline const QColor kPreemptionColor(214, 39, 40);

}  // namespace inferscope::gui
