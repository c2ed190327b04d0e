#include "gui/compare/device_picker.h"

#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QStandardItemModel>
#include <QVBoxLayout>
#include <algorithm>

namespace inferscope::gui {

QString device_tooltip(const DeviceProfile& d) {
  QString figures;
  if (d.roofline) {
    figures = QString("memory bandwidth %1 GB/s, peak %2 TFLOPS, step overhead %3 µs: a step takes max(bytes read / "
                      "bandwidth, FLOPs / peak) + the overhead")
                  .arg(d.roofline->bandwidth_bytes_per_s / 1e9, 0, 'f', 0)
                  .arg(d.roofline->peak_flops / 1e12, 0, 'f', 0)
                  .arg(d.roofline->step_overhead_s * 1e6, 0, 'f', 0);
  } else if (d.linear) {
    figures = QString("%1 ms per step + %2 ms per token computed")
                  .arg(d.linear->fixed_s * 1e3, 0, 'g', 4)
                  .arg(d.linear->per_token_s * 1e3, 0, 'g', 4);
  }
  if (d.memory_bytes > 0) figures += QString("; memory %1 GiB").arg(d.memory_bytes / double(1 << 30), 0, 'f', 1);
  QString sources;
  for (const std::string& source : d.sources) sources += "\n• " + QString::fromStdString(source);
  return QString::fromStdString(d.name) + "\n" + figures + (sources.isEmpty() ? QString() : "\nSources:" + sources);
}

DevicePicker::DevicePicker(std::vector<DeviceFile> devices, QWidget* parent)
    : QWidget(parent), devices_(std::move(devices)), combo_(new QComboBox) {
  auto* model = qobject_cast<QStandardItemModel*>(combo_->model());
  for (const DeviceFile& file : devices_) {
    const QString name = QFileInfo(file.path).fileName();
    if (file.profile) {
      combo_->addItem(QString::fromStdString(file.profile->name), name);
      combo_->setItemData(combo_->count() - 1, device_tooltip(*file.profile), Qt::ToolTipRole);
    } else {
      // Listed but not selectable: the user sees which file is broken and why.
      combo_->addItem(name + " (cannot be read)", name);
      combo_->setItemData(combo_->count() - 1, file.error, Qt::ToolTipRole);
      model->item(combo_->count() - 1)->setEnabled(false);
    }
  }
  const auto first_readable = std::find_if(devices_.begin(), devices_.end(), [](const DeviceFile& f) { return f.profile; });
  if (first_readable != devices_.end()) combo_->setCurrentIndex(static_cast<int>(first_readable - devices_.begin()));
  const auto show_tooltip = [this](int index) { combo_->setToolTip(combo_->itemData(index, Qt::ToolTipRole).toString()); };
  connect(combo_, &QComboBox::currentIndexChanged, this, show_tooltip);
  show_tooltip(combo_->currentIndex());

  auto* note = new QLabel("Simulated: a dry run of the configuration below on the loaded model's shapes, each step priced "
                          "on this device's roofline (or linear costs) on a virtual clock. Not a measurement; no text is "
                          "generated.");
  note->setObjectName("simulated_note");
  note->setWordWrap(true);
  note->setStyleSheet("color:#92400e; background:#fffbeb; border:1px solid #fcd34d; padding:2px 4px;");
  auto* label = new QLabel("device model");
  label->setStyleSheet("color:#374151;");
  auto* row = new QHBoxLayout;
  row->addWidget(label);
  row->addWidget(combo_, 1);
  auto* column = new QVBoxLayout(this);
  column->setContentsMargins(0, 0, 0, 0);
  column->setSpacing(3);
  column->addLayout(row);
  column->addWidget(note);
}

void DevicePicker::name_widgets(const QString& prefix) {
  combo_->setObjectName(prefix + "device");
  findChild<QLabel*>("simulated_note")->setObjectName(prefix + "simulated_note");
}

bool DevicePicker::select(const QString& file_name) {
  for (int i = 0; i < combo_->count(); ++i) {
    if (combo_->itemData(i).toString() == file_name && devices_[static_cast<size_t>(i)].profile) {
      combo_->setCurrentIndex(i);
      return true;
    }
  }
  return false;
}

std::string DevicePicker::device_name() const {
  QString ignored;
  const std::optional<DeviceProfile> selected = device(&ignored);
  return selected ? selected->name : std::string();
}

std::optional<DeviceProfile> DevicePicker::device(QString* error) const {
  const int index = combo_->currentIndex();
  if (index >= 0 && devices_[static_cast<size_t>(index)].profile) return devices_[static_cast<size_t>(index)].profile;
  *error = devices_.empty() ? "no device profile found in resources/devices" : "no readable device profile is selected";
  return std::nullopt;
}

}  // namespace inferscope::gui
