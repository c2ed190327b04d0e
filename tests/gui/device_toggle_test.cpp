// The config panel's device toggle: the CPU and one entry per CUDA device the probe finds, a device
// that cannot run disabled with the reason as its tooltip; choosing an entry asks the engine for that
// device (applied between steps); the line under it says where the engine runs and why.
#include <gtest/gtest.h>

#include <QComboBox>
#include <QStandardItemModel>

#include "core/device/device_probe.h"
#include "gui/config/config_panel.h"
#include "gui/config/device_choices.h"
#include "tests/gui/offscreen_app.h"

namespace inferscope::gui::test {
namespace {

GpuProbe two_gpus() {
  GpuProbe probe;
  probe.gpus = {GpuInfo{0, "NVIDIA H200", size_t{141} << 30, 9, 0}, GpuInfo{1, "NVIDIA L40S", size_t{48} << 30, 8, 9}};
  return probe;
}

TEST(DeviceChoices, EachGpuIsAnEntryUsableInACudaBuild) {
  const std::vector<DeviceChoice> choices = device_choices(two_gpus(), true);
  ASSERT_EQ(choices.size(), 3u);
  EXPECT_EQ(choices[0].label, "CPU");
  EXPECT_EQ(choices[0].device, ComputeDevice{});
  EXPECT_EQ(choices[1].label, "CUDA:0 — NVIDIA H200");
  EXPECT_EQ(choices[1].device, (ComputeDevice{true, 0}));
  EXPECT_EQ(choices[2].label, "CUDA:1 — NVIDIA L40S");
  EXPECT_EQ(choices[2].device, (ComputeDevice{true, 1}));
  for (const DeviceChoice& c : choices) EXPECT_TRUE(c.unavailable.isEmpty()) << c.label.toStdString();
}

TEST(DeviceChoices, GpusOfABuildWithoutCudaSayWhyTheyCannotRun) {
  const std::vector<DeviceChoice> choices = device_choices(two_gpus(), false);
  ASSERT_EQ(choices.size(), 3u);
  EXPECT_TRUE(choices[0].unavailable.isEmpty());
  EXPECT_EQ(choices[1].unavailable, "built without CUDA (configure with INFERSCOPE_CUDA=ON)");
  EXPECT_EQ(choices[2].unavailable, "built without CUDA (configure with INFERSCOPE_CUDA=ON)");
}

TEST(DeviceChoices, NoGpuIsOneCudaEntryWithTheProbesReason) {
  GpuProbe probe;
  probe.unavailable_reason = "no CUDA device: cudaGetDeviceCount found none";
  const std::vector<DeviceChoice> choices = device_choices(probe, true);
  ASSERT_EQ(choices.size(), 2u);
  EXPECT_EQ(choices[1].label, "CUDA");
  EXPECT_EQ(choices[1].unavailable, "no CUDA device: cudaGetDeviceCount found none");
}

// This machine has no usable GPU: the CUDA entry is disabled, its tooltip saying why.
TEST(DeviceToggle, HereCudaIsDisabledWithTheReasonAndTheCpuApplies) {
  offscreen_app();
  ConfigPanel panel;
  auto* device = panel.findChild<QComboBox*>("device");
  ASSERT_NE(device, nullptr);
  auto* items = qobject_cast<QStandardItemModel*>(device->model());
  ASSERT_GE(device->count(), 2);
  EXPECT_EQ(device->itemText(0), "CPU");
  EXPECT_TRUE(items->item(0)->isEnabled());
  const GpuProbe probe = probe_gpus();
  ASSERT_TRUE(probe.gpus.empty()) << "this test expects a machine without a usable GPU";
  const QString why = cuda_compiled_in() ? QString::fromStdString(probe.unavailable_reason)
                                         : QString("built without CUDA (configure with INFERSCOPE_CUDA=ON)");
  EXPECT_EQ(device->itemText(1), "CUDA");
  EXPECT_FALSE(items->item(1)->isEnabled());
  EXPECT_EQ(items->item(1)->toolTip(), why);
  EXPECT_FALSE(why.isEmpty());

  // An engine on a CUDA device shows it; choosing the CPU asks for the CPU.
  EngineConfig on_cuda;
  on_cuda.device = ComputeDevice{true, 0};
  std::vector<EngineConfig> applied;
  QObject::connect(&panel, &ConfigPanel::apply_requested, [&](const EngineConfig& c) { applied.push_back(c); });
  panel.set_config(on_cuda);
  EXPECT_EQ(device->currentIndex(), 1);
  EXPECT_TRUE(applied.empty());
  EXPECT_EQ(panel.config().device, (ComputeDevice{true, 0}));
  device->setCurrentIndex(0);
  ASSERT_EQ(applied.size(), 1u);
  EXPECT_EQ(applied[0].device, ComputeDevice{});
  EXPECT_EQ(panel.config().device, ComputeDevice{});

  EngineMetricsSnapshot m;
  m.device = "cpu";
  m.device_fallback = "fell back from cuda:0 after: cuda:0: cudaMemcpy failed";
  panel.show_device(m);
  EXPECT_EQ(panel.device_text(), "running on: cpu (fell back from cuda:0 after: cuda:0: cudaMemcpy failed)");
  panel.resize(420, 1100);
  render(panel, "config_panel_device");
}

}  // namespace
}  // namespace inferscope::gui::test
