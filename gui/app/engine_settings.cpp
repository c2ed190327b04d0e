#include "gui/app/engine_settings.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "core/engine/config_overrides.h"

namespace inferscope::gui {
namespace {

const QString kGroup = QStringLiteral("engine/");

QVariant to_variant(const nlohmann::json& value) {
  if (value.is_boolean()) return value.get<bool>();
  if (value.is_number_integer()) return QVariant::fromValue(value.get<qlonglong>());
  if (value.is_number_float()) return value.get<double>();
  return QString::fromStdString(value.get<std::string>());
}

// The stored text as a value of the same JSON type as `like` (INI files keep text only); nullopt when it is none.
std::optional<nlohmann::json> typed_like(const nlohmann::json& like, const QString& text) {
  bool ok = true;
  if (like.is_boolean()) {
    if (text != "true" && text != "false") return std::nullopt;
    return nlohmann::json(text == "true");
  }
  if (like.is_number_unsigned()) {
    const qulonglong n = text.toULongLong(&ok);
    return ok ? std::optional(nlohmann::json(n)) : std::nullopt;
  }
  if (like.is_number_integer()) {
    const qlonglong n = text.toLongLong(&ok);
    return ok ? std::optional(nlohmann::json(n)) : std::nullopt;
  }
  if (like.is_number_float()) {
    const double x = text.toDouble(&ok);
    return ok ? std::optional(nlohmann::json(x)) : std::nullopt;
  }
  return nlohmann::json(text.toStdString());
}

}  // namespace

void save_engine_config(QSettings& settings, const EngineConfig& config) {
  const nlohmann::json overrides = config_overrides_of(config);
  for (const auto& [key, value] : overrides.items()) {
    // The device is chosen each session: a GPU gone by the next start would leave no engine to run.
    if (key == "device") continue;
    settings.setValue(kGroup + QString::fromStdString(key), to_variant(value));
  }
}

StoredEngineConfig load_engine_config(const QSettings& settings, const EngineConfig& defaults) {
  StoredEngineConfig stored{defaults, false, {}};
  const std::string where = settings.fileName().toStdString();
  const nlohmann::json types = config_overrides_of(defaults);
  for (const auto& [key, like] : types.items()) {
    const QString name = kGroup + QString::fromStdString(key);
    if (!settings.contains(name)) continue;
    stored.found = true;
    const QString text = settings.value(name).toString();
    const std::optional<nlohmann::json> value = typed_like(like, text);
    if (!value) {
      stored.problems << QString("%1: %2 = '%3' is not a %4; ignored")
                             .arg(settings.fileName(), name, text, QString::fromUtf8(like.type_name()));
      continue;
    }
    // One toggle at a time, so one bad value leaves the others applied.
    try {
      stored.config = apply_config_overrides(stored.config, {{key, *value}}, where);
    } catch (const std::runtime_error& e) {
      stored.problems << QString::fromStdString(e.what()) + "; ignored";
    }
  }
  return stored;
}

}  // namespace inferscope::gui
