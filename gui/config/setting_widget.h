// One engine setting as an editable widget, made from its row in the setting table: a combo box for
// a choice, a spin box for a number (its lowest value shown as what it stands for), a check box for
// on/off, a file picker for a path. The editors show and read every setting as its text.
#pragma once
#include <QObject>
#include <QWidget>
#include <functional>
#include <string>

#include "core/engine/setting_table.h"

namespace inferscope::gui {

// Parentless; whoever lays it out owns it. Not for SettingKind::Device (its choices are the devices found).
QWidget* make_setting_widget(const EngineSetting& setting);
// Shows `text` (one the setting's get() wrote) without emitting a change.
void show_setting(QWidget* widget, const EngineSetting& setting, const std::string& text);
// The shown value as the setting's text.
std::string shown_setting(const QWidget* widget, const EngineSetting& setting);
// Calls `changed` when a choice changes, or when an edit of a number or a path ends on a new value.
void on_setting_edited(QWidget* widget, const EngineSetting& setting, QObject* context, const std::function<void()>& changed);
// The shown number becomes the applied one (an edit that ends on it changes nothing).
void mark_setting_applied(QWidget* widget, const EngineSetting& setting);

}  // namespace inferscope::gui
