// The engine configuration kept between runs in QSettings: group "engine", one key per remembered
// setting of core/engine/setting_table.h, as its text ("engine/kv" = paged, "engine/block_size" = 16,
// ...). Reading never throws: a stored value its setting refuses is skipped, named in `problems`.
#pragma once
#include <QSettings>
#include <QStringList>

#include "core/engine/engine_config.h"

namespace inferscope::gui {

struct StoredEngineConfig {
  EngineConfig config;   // `defaults` with every good stored toggle applied
  bool found = false;    // any engine key was stored
  QStringList problems;  // one line per skipped key, naming the settings file, the key and its value
};

void save_engine_config(QSettings& settings, const EngineConfig& config);
StoredEngineConfig load_engine_config(const QSettings& settings, const EngineConfig& defaults);

}  // namespace inferscope::gui
