#include "gui/config/config_panel.h"

#include <QComboBox>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QScrollArea>
#include <QScrollBar>
#include <QStandardItemModel>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <map>

#include "core/device/device_probe.h"
#include "gui/config/device_choices.h"
#include "gui/model/model_info_panel.h"
#include "gui/plot/vertical_scroll.h"

namespace inferscope::gui {

ConfigPanel::ConfigPanel(QWidget* parent)
    : QWidget(parent),
      device_(new QComboBox),
      device_status_(new QLabel),
      weights_(new QLabel("weights: no model")),
      result_(new QLabel),
      result_timer_(new QTimer(this)),
      conversion_(new QProgressBar),
      scroll_(nullptr) {
  // Each device the probe found, a device it cannot run on disabled with the reason as its tooltip.
  auto* devices = qobject_cast<QStandardItemModel*>(device_->model());
  for (const DeviceChoice& choice : device_choices(probe_gpus(), cuda_compiled_in())) {
    device_->addItem(choice.label, QString::fromStdString(compute_device_name(choice.device)));
    if (choice.unavailable.isEmpty()) continue;
    QStandardItem* item = devices->item(devices->rowCount() - 1);
    item->setEnabled(false);
    item->setToolTip(choice.unavailable);
  }

  auto* content = new QWidget;
  auto* column = new QVBoxLayout(content);
  column->setContentsMargins(4, 4, 4, 4);
  std::map<QString, QVBoxLayout*> sections;
  auto section = [&](const QString& title) {
    auto*& layout = sections[title];
    if (!layout) {
      auto* box = new QGroupBox(title);
      layout = new QVBoxLayout(box);
      layout->setSpacing(1);
      column->addWidget(box);
    }
    return layout;
  };
  for (const ConfigFields::Row& row : fields_.rows()) {
    add_row(section(row.section), row);
    // The weights in use, and a background conversion's progress, sit under the quantization toggle.
    if (row.field == fields_.field("quant")) {
      section(row.section)->addWidget(weights_);
      section(row.section)->addWidget(conversion_);
    }
  }
  const EngineSetting& device = *find_setting("device");
  add_row(section(QString::fromStdString(device.section)), setting_row(device, device_));
  section("Compute")->addWidget(device_status_);
  column->addStretch(1);

  // Object names let tests and scripts find each toggle.
  fields_.name_widgets({});
  device_->setObjectName(QString::fromStdString(device.key));
  device_status_->setObjectName("device_status");
  weights_->setObjectName("weights_status");
  conversion_->setObjectName("conversion_progress");

  weights_->setStyleSheet("color:#374151; font-size:8pt;");
  weights_->setToolTip("The weight format the steps run on now, and the bytes of its matrices (what each decode step reads)");
  conversion_->setRange(0, 100);
  conversion_->setTextVisible(false);  // the line above it gives the percentage
  conversion_->setVisible(false);
  conversion_->setToolTip("Weights converting in the background; requests go on with the old ones until the swap");

  device_status_->setStyleSheet("color:#374151; font-size:8pt;");
  device_status_->setWordWrap(true);

  result_->setWordWrap(true);
  result_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  result_->setMinimumHeight(32);
  result_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  result_timer_->setObjectName("result_timer");
  result_timer_->setSingleShot(true);
  result_timer_->setInterval(kResultSeconds * 1000);
  connect(result_timer_, &QTimer::timeout, this, &ConfigPanel::clear_result);

  scroll_ = vertical_scroll(content);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(scroll_, 1);
  layout->addWidget(result_);

  fields_.on_change(this, [this] { changed(); });
  connect(device_, &QComboBox::currentIndexChanged, this, [this] { changed(); });
}

void ConfigPanel::add_row(QVBoxLayout* section, const ToggleRow& toggle) {
  auto* row = new QHBoxLayout;
  auto* name = new QLabel(toggle.label);
  name->setMinimumWidth(96);
  row->addWidget(name);
  row->addWidget(toggle.field, 1);
  section->addLayout(row);
  auto* note = new QLabel(toggle.explanation);
  note->setWordWrap(true);
  note->setStyleSheet("color:#6b7280; font-size:8pt; margin-bottom:3px;");
  section->addWidget(note);
  toggle.field->setToolTip(toggle.tooltip);
}

void ConfigPanel::set_config(const EngineConfig& c) {
  updating_ = true;
  base_ = c;
  fields_.show(c);
  device_->setCurrentIndex(std::max(0, device_->findData(QString::fromStdString(compute_device_name(c.device)))));
  updating_ = false;
}

EngineConfig ConfigPanel::config() const {
  EngineConfig c = fields_.read(base_);
  c.device = compute_device_from_name(device_->currentData().toString().toStdString()).value_or(ComputeDevice{});
  return c;
}

void ConfigPanel::show_result(bool applied, const QString& message) {
  result_->setStyleSheet(applied ? "color:#065f46; background:#ecfdf5; padding:4px;"
                                 : "color:#b91c1c; background:#fef2f2; padding:4px;");
  result_->setText(message);
  result_timer_->start();
}

void ConfigPanel::show_note(const QString& message) {
  result_->setStyleSheet("color:#1e3a8a; background:#eff6ff; padding:4px;");
  result_->setText(message);
  result_timer_->start();
}

void ConfigPanel::clear_result() {
  result_timer_->stop();
  result_->setStyleSheet({});
  result_->clear();
}

QString ConfigPanel::result_text() const { return result_->text(); }

void ConfigPanel::show_weights(const EngineMetricsSnapshot& m) {
  QString text = QString("weights in use: %1 · %2")
                     .arg(QString::fromStdString(m.weights_quant), format_bytes(static_cast<double>(m.weight_bytes)));
  const bool converting = !m.converting_to.empty();
  if (converting) {
    const int percent = static_cast<int>(m.conversion_progress * 100);
    text += QString(" · converting to %1: %2%…").arg(QString::fromStdString(m.converting_to)).arg(percent);
    conversion_->setValue(percent);
  }
  conversion_->setVisible(converting);
  weights_->setText(text);
}

QString ConfigPanel::weights_text() const { return weights_->text(); }

void ConfigPanel::show_device(const EngineMetricsSnapshot& m) {
  device_status_->setText("running on: " + QString::fromStdString(device_line(m)));
}

QString ConfigPanel::device_text() const { return device_status_->text(); }

bool ConfigPanel::converting() const { return !conversion_->isHidden(); }

bool ConfigPanel::reveal(const QString& name) {
  auto* field = scroll_->widget()->findChild<QWidget*>(name);
  if (!field) return false;
  // The whole section from its title down, as far as the view allows.
  QWidget* section = field->parentWidget();
  scroll_->ensureWidgetVisible(section, 0, 0);
  scroll_->ensureWidgetVisible(field);
  // The panel scrolls up and down only: a field wider than the view must not shift it sideways.
  scroll_->horizontalScrollBar()->setValue(0);
  return true;
}

void ConfigPanel::changed() {
  fields_.refresh_enabled();
  if (updating_) return;
  // A choice that cannot run yet (a draft mode before its file is picked) waits instead of being refused.
  if (const QString missing = fields_.missing(); !missing.isEmpty()) return show_note(missing);
  const EngineConfig c = config();
  fields_.mark_applied();
  base_ = c;
  emit apply_requested(c);
}

}  // namespace inferscope::gui
