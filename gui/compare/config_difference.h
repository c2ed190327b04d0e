// Which settings configurations A and B differ in, and what that allows a comparison to say: one
// setting changed, and the runs' differences are its effect; several, and they cannot be attributed
// to any one of them; none, and they are run-to-run noise. A side simulated on a device runs
// elsewhere than the other: then the device differs too.
#pragma once
#include <string>
#include <vector>

#include "core/engine/engine_config.h"

namespace inferscope::gui {

// The names of the settings whose values differ (setting_table.h's, in its order), the device aside.
// A setting that one side does not read is left out: block size and prefix cache unless both caches
// are paged, a speculation mode's own fields unless both sides use that mode.
std::vector<std::string> differing_settings(const EngineConfig& a, const EngineConfig& b);

// "A and B differ in 3 settings (KV, attention, weights): differences cannot be attributed to one of
// them"; a note when none differ; "" when exactly one does. `same_device` false (a side simulated on
// a device the other does not run on): the device is one more difference, so one setting is not enough.
std::string attribution_note(const std::vector<std::string>& differing, bool same_device = true);

}  // namespace inferscope::gui
