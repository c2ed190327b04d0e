#include "gui/app/engine_settings.h"

#include "core/engine/setting_table.h"

namespace inferscope::gui {
namespace {

const QString kGroup = QStringLiteral("engine/");

}  // namespace

void save_engine_config(QSettings& settings, const EngineConfig& config) {
  for (const EngineSetting& s : engine_settings()) {
    if (s.remembered) settings.setValue(kGroup + QString::fromStdString(s.key), QString::fromStdString(s.get(config)));
  }
}

StoredEngineConfig load_engine_config(const QSettings& settings, const EngineConfig& defaults) {
  StoredEngineConfig stored{defaults, false, {}};
  for (const EngineSetting& s : engine_settings()) {
    const QString name = kGroup + QString::fromStdString(s.key);
    if (!s.remembered || !settings.contains(name)) continue;
    stored.found = true;
    const QString text = settings.value(name).toString();
    // One setting at a time, so one bad value leaves the others applied.
    try {
      s.set(stored.config, text.toStdString());
    } catch (const SettingError& e) {
      stored.problems << QString("%1: %2 = '%3' %4; ignored").arg(settings.fileName(), name, text, e.what());
    }
  }
  return stored;
}

}  // namespace inferscope::gui
