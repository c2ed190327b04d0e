#include "gui/config/config_fields.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QStackedWidget>
#include <optional>

#include "gui/config/setting_widget.h"

namespace inferscope::gui {
namespace {

// The mode a setting belongs to when it applies under exactly one speculation mode (the n-gram sizes,
// the draft model, its level, the early-exit layers): those settings make up that mode's drafter page.
std::optional<SpecMode> drafter_mode(const EngineSetting& s) {
  std::optional<SpecMode> only;
  int modes = 0;
  for (const SpecModeInfo& m : kSpecModes) {
    EngineConfig c;
    c.spec.mode = m.mode;
    if (s.applies_to(c)) ++modes, only = m.mode;
  }
  return modes == 1 ? only : std::nullopt;
}

// A page of fields side by side ("2 .. 8" for the n-gram sizes), or a grey note when nothing drafts.
QWidget* drafter_page(const std::vector<QWidget*>& widgets) {
  if (widgets.empty()) {
    auto* label = new QLabel("nothing drafts");
    label->setStyleSheet("color:#9ca3af;");
    return label;
  }
  if (widgets.size() == 1) return widgets[0];
  auto* page = new QWidget;
  auto* row = new QHBoxLayout(page);
  row->setContentsMargins(0, 0, 0, 0);
  for (size_t i = 0; i < widgets.size(); ++i) {
    if (i > 0) row->addWidget(new QLabel(".."));
    row->addWidget(widgets[i], 1);
  }
  return page;
}

}  // namespace

ToggleRow setting_row(const EngineSetting& s, QWidget* field) {
  const QString explanation = QString::fromStdString(s.explanation);
  return {QString::fromStdString(s.section), QString::fromStdString(s.label), field, explanation,
          explanation + "\nChanging it: " + QString::fromStdString(s.switch_cost) + "."};
}

ConfigFields::ConfigFields() : drafter(new QStackedWidget) {
  for (const EngineSetting& s : engine_settings()) {
    if (s.kind != SettingKind::Device) fields.push_back({&s, make_setting_widget(s)});
  }
  for (const SpecModeInfo& m : kSpecModes) {
    std::vector<QWidget*> widgets;
    for (const Field& f : fields)
      if (drafter_mode(*f.setting) == m.mode) widgets.push_back(f.widget);
    drafter->addWidget(drafter_page(widgets));
  }
}

QWidget* ConfigFields::field(std::string_view key) const {
  for (const Field& f : fields) {
    if (f.setting->key == key) return f.widget;
  }
  return nullptr;
}

std::vector<ConfigFields::Row> ConfigFields::rows() const {
  std::vector<Row> out;
  for (const Field& f : fields) {
    const EngineSetting& s = *f.setting;
    if (drafter_mode(s)) continue;
    out.push_back(setting_row(s, f.widget));
    if (s.key == "spec_k") {
      const QString drafts = "ngram: the n-grams earlier in the text; draft: a GGUF with the same vocabulary; "
                             "self-quant: the target at a smaller level; early-exit: the target's first layers.";
      out.push_back({QString::fromStdString(s.section), "drafter", drafter, drafts, drafts});
    }
  }
  return out;
}

void ConfigFields::show(const EngineConfig& c) {
  for (const Field& f : fields) show_setting(f.widget, *f.setting, f.setting->get(c));
  mark_applied();
  refresh_enabled();
}

EngineConfig ConfigFields::read(EngineConfig c) const {
  // In table order, so that a setting is read once the settings it depends on (the mode) are.
  for (const Field& f : fields) {
    if (f.setting->applies_to(c)) f.setting->set(c, shown_setting(f.widget, *f.setting));
  }
  return c;
}

void ConfigFields::refresh_enabled() {
  const EngineConfig shown = read(EngineConfig{});
  for (const Field& f : fields) f.widget->setEnabled(f.setting->applies_to(shown));
  drafter->setCurrentIndex(static_cast<int>(shown.spec.mode));
}

QString ConfigFields::missing() const {
  const EngineConfig shown = read(EngineConfig{});
  if (shown.spec.mode == SpecMode::Draft && shown.spec.draft_model.empty()) {
    return "Choose the draft model file (a GGUF with the target's vocabulary): speculation starts once one is picked.";
  }
  if (shown.spec.mode == SpecMode::EarlyExit && shown.spec.draft_layers == 0) {
    return "Choose how many of the target's first layers draft: speculation starts once they are set.";
  }
  return {};
}

void ConfigFields::on_change(QObject* ctx, const std::function<void()>& changed) {
  for (const Field& f : fields) on_setting_edited(f.widget, *f.setting, ctx, changed);
}

void ConfigFields::mark_applied() {
  for (const Field& f : fields) mark_setting_applied(f.widget, *f.setting);
}

void ConfigFields::name_widgets(const QString& prefix) {
  for (const Field& f : fields) f.widget->setObjectName(prefix + QString::fromStdString(f.setting->key));
  drafter->setObjectName(prefix + "drafter");
}

}  // namespace inferscope::gui
