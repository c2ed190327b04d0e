// The device model of a simulated comparison side: a combo of the shipped device profiles
// (builtin_devices; a file that cannot be read stays listed, disabled, with its error as tooltip),
// each with its figures and sources as tooltip, and a note that the side is a dry run priced on the
// device, not a measurement.
#pragma once
#include <QWidget>
#include <optional>
#include <string>
#include <vector>

#include "gui/compare/simulated_side.h"

class QComboBox;

namespace inferscope::gui {

// The figures a dry run prices steps with, and where they come from: "memory bandwidth 4800 GB/s, …".
QString device_tooltip(const DeviceProfile& device);

class DevicePicker : public QWidget {
 public:
  explicit DevicePicker(std::vector<DeviceFile> devices, QWidget* parent = nullptr);

  // Object names prefix + "device", "simulated_note", for tests and the demo.
  void name_widgets(const QString& prefix);
  // Selects the device read from `file_name` ("h200.json"); false when no readable device has that name.
  bool select(const QString& file_name);
  // The selected device, or nullopt with `error` set (none readable).
  std::optional<DeviceProfile> device(QString* error) const;
  // The selected device's name, "" when none is readable.
  std::string device_name() const;
  QComboBox* combo() const { return combo_; }

 private:
  std::vector<DeviceFile> devices_;  // one per combo item, in order
  QComboBox* combo_;
};

}  // namespace inferscope::gui
