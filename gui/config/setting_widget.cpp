#include "gui/config/setting_widget.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QSpinBox>
#include <stdexcept>

#include "gui/config/field_widgets.h"
#include "gui/config/file_picker.h"

namespace inferscope::gui {

QWidget* make_setting_widget(const EngineSetting& s) {
  switch (s.kind) {
    case SettingKind::Choice: {
      QStringList items;
      for (const std::string& c : s.choices) items << QString::fromStdString(c);
      return combo(items);
    }
    case SettingKind::Integer:
      return spin(static_cast<int>(s.min), static_cast<int>(s.max), static_cast<int>(s.step),
                  QString::fromStdString(s.lowest_means), QString::fromStdString(s.unit));
    case SettingKind::Real: {
      auto* box = new QDoubleSpinBox;
      box->setRange(s.min, s.max);
      box->setSingleStep(s.step);
      box->setDecimals(2);
      box->setSpecialValueText(QString::fromStdString(s.lowest_means));
      return box;
    }
    case SettingKind::Switch: return new QCheckBox(QString::fromStdString(s.switch_text));
    case SettingKind::Path: return new FilePicker("Choose the " + QString::fromStdString(s.name), "GGUF models (*.gguf)");
    case SettingKind::Device: break;
  }
  throw std::logic_error("no widget for the setting '" + s.key + "'");
}

void show_setting(QWidget* w, const EngineSetting& s, const std::string& text) {
  const QString value = QString::fromStdString(text);
  switch (s.kind) {
    case SettingKind::Choice: static_cast<QComboBox*>(w)->setCurrentText(value); break;
    case SettingKind::Integer: {
      auto* box = static_cast<QSpinBox*>(w);
      bool number = false;
      const int n = value.toInt(&number);
      box->setValue(number ? n : box->minimum());  // a word ("auto") stands for the lowest
      break;
    }
    case SettingKind::Real: static_cast<QDoubleSpinBox*>(w)->setValue(value.toDouble()); break;
    case SettingKind::Switch: static_cast<QCheckBox*>(w)->setChecked(text == "on"); break;
    case SettingKind::Path: static_cast<FilePicker*>(w)->set_path(value); break;
    case SettingKind::Device: break;
  }
}

std::string shown_setting(const QWidget* w, const EngineSetting& s) {
  switch (s.kind) {
    case SettingKind::Choice: return static_cast<const QComboBox*>(w)->currentText().toStdString();
    case SettingKind::Integer: {
      const auto* box = static_cast<const QSpinBox*>(w);
      // The lowest value reads as the word it stands for ("auto"), which the setting takes.
      if (box->value() == box->minimum() && !s.lowest_means.empty()) return s.lowest_means;
      return std::to_string(box->value());
    }
    case SettingKind::Real: {
      const auto* box = static_cast<const QDoubleSpinBox*>(w);
      if (box->value() == box->minimum() && !s.lowest_means.empty()) return s.lowest_means;
      return QString::number(box->value()).toStdString();
    }
    case SettingKind::Switch: return static_cast<const QCheckBox*>(w)->isChecked() ? "on" : "off";
    case SettingKind::Path: return static_cast<const FilePicker*>(w)->path().toStdString();
    case SettingKind::Device: break;
  }
  throw std::logic_error("no widget for the setting '" + s.key + "'");
}

void on_setting_edited(QWidget* w, const EngineSetting& s, QObject* ctx, const std::function<void()>& changed) {
  switch (s.kind) {
    case SettingKind::Choice:
      QObject::connect(static_cast<QComboBox*>(w), &QComboBox::currentIndexChanged, ctx, changed);
      break;
    case SettingKind::Integer: on_new_value(static_cast<QSpinBox*>(w), ctx, changed); break;
    case SettingKind::Real: on_new_value(static_cast<QDoubleSpinBox*>(w), ctx, changed); break;
    case SettingKind::Switch: QObject::connect(static_cast<QCheckBox*>(w), &QCheckBox::toggled, ctx, changed); break;
    case SettingKind::Path: QObject::connect(static_cast<FilePicker*>(w), &FilePicker::changed, ctx, changed); break;
    case SettingKind::Device: break;
  }
}

void mark_setting_applied(QWidget* w, const EngineSetting& s) {
  if (s.kind == SettingKind::Integer) mark_applied(static_cast<QSpinBox*>(w));
  if (s.kind == SettingKind::Real) mark_applied(static_cast<QDoubleSpinBox*>(w));
}

}  // namespace inferscope::gui
