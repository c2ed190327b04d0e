// The Compare A/B tab with a simulated side on stories260K through the real runner: A on the local
// engine against B simulated on the H200 profile with the same configuration. B is labelled simulated
// on the device everywhere (source, headline, export, status), its duration is the virtual clock's,
// no output is compared or shown as text, attention scratch is unavailable for B (in the table and
// the charts), and the device combo lists every device file. A bad device file is listed disabled
// with its error, not a crash; a simulated side needs the loaded model (its shapes); a speculative
// configuration cannot be simulated.
// Set COMPARE_SIMULATED_SCREENSHOT to a PNG path to keep a picture of the tab.
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QTableWidget>
#include <qcustomplot.h>

#include <nlohmann/json.hpp>

#include "core/servesim/device_profile.h"
#include "gui/compare/compare_view.h"
#include "gui/compare/device_picker.h"
#include "gui/dashboard/metrics_dashboard.h"
#include "gui/dashboard/request_timeline.h"
#include "tests/gui/compare_fixture.h"

namespace inferscope::gui::test {
namespace {

std::string h200_name() {
  return read_device_profile(::inferscope::test::source_path("resources/devices/h200.json")).name;
}

using CompareSimulated = CompareWindow;

TEST_F(CompareSimulated, LocalAgainstASimulatedH200IsLabelledAndNotComparedByOutput) {
  const EngineConfig config = w->bridge().config();
  view->set_configs(config, config);
  ASSERT_TRUE(view->set_simulated(1, "h200.json"));
  EXPECT_TRUE(view->simulated(1));
  EXPECT_FALSE(view->simulated(0));
  EXPECT_FALSE(view->on_server(1));
  EXPECT_FALSE(view->device_picker(1)->isHidden()) << "the device model shows while simulated";
  EXPECT_TRUE(view->device_picker(0)->isHidden());
  view->use_workload_file(write_workload(dir, 3, 16));
  ASSERT_TRUE(run_comparison(*view)) << view->status_text().toStdString();
  const Comparison* c = view->result();
  ASSERT_NE(c, nullptr) << view->status_text().toStdString();

  const std::string device = h200_name();
  EXPECT_TRUE(c->a.simulated_on.empty());
  EXPECT_EQ(c->b.simulated_on, device);
  EXPECT_EQ(side_source(c->b), "simulated on " + device + " (dry run)");
  EXPECT_EQ(c->b.summary.requests_finished, 3);
  // The virtual clock of a roofline GPU runs far ahead of a measured CPU run.
  EXPECT_LT(c->b.duration_s, c->a.duration_s);

  // No output pair claims anything, and B shows no placeholder text.
  ASSERT_EQ(c->outputs.size(), 3u);
  for (const OutputPair& p : c->outputs) {
    EXPECT_FALSE(p.compared) << "request " << p.id;
    EXPECT_EQ(p.divergence, -1);
    EXPECT_TRUE(p.b.simulated);
    EXPECT_TRUE(p.b.common.empty() && p.b.marked.empty() && p.b.after.empty());
  }
  const QString outputs = view->outputs_text();
  EXPECT_EQ(outputs.count("simulated: no text"), 3) << outputs.toStdString();
  EXPECT_FALSE(outputs.contains("diverges"));
  EXPECT_FALSE(outputs.contains("identical"));

  // The headline names the device and says the outputs are not compared; the status says B is on a virtual clock.
  const QString headline = view->findChild<QLabel*>("compare_headline")->text();
  EXPECT_TRUE(headline.contains(QString::fromStdString("simulated on " + device + " (dry run)").toHtmlEscaped()))
      << headline.toStdString();
  EXPECT_TRUE(headline.contains("outputs not compared: B was simulated"));
  EXPECT_TRUE(headline.contains("the same configuration on different devices")) << "not run-to-run noise";
  EXPECT_TRUE(view->status_text().contains("virtual clock")) << view->status_text().toStdString();

  const nlohmann::json j = comparison_json(*c);
  EXPECT_FALSE(j["a"].contains("simulated_on"));
  EXPECT_EQ(j["b"]["simulated_on"], device);
  EXPECT_FALSE(j["outputs_must_match"].get<bool>());

  // Attention scratch is unavailable for B, named so; A's measurement stands.
  QTableWidget& table = *view->delta_table();
  bool found = false;
  for (int row = 0; row < table.rowCount(); ++row) {
    if (table.item(row, 0)->text() != "attention scratch peak") continue;
    found = true;
    EXPECT_EQ(table.item(row, 2)->text(), "not reported by a dry run");
    EXPECT_NE(table.item(row, 1)->text(), "not reported by a dry run");
  }
  EXPECT_TRUE(found);

  // The charts label B simulated, and its attention panel is empty rather than a line at 0.
  QCustomPlot* attention = view->dashboard()->plot("attention");
  ASSERT_NE(attention, nullptr);
  int a_points = 0, b_graphs = 0;
  for (int i = 0; i < attention->graphCount(); ++i) {
    const QCPGraph& g = *attention->graph(i);
    if (g.name().endsWith("B (dry run) · top axis")) {
      ++b_graphs;
      EXPECT_EQ(g.dataCount(), 0) << g.name().toStdString();
    } else {
      a_points += g.dataCount();
    }
  }
  EXPECT_GT(b_graphs, 0);
  EXPECT_GT(a_points, 0) << "A's attention was measured";

  // B's virtual clock is not squeezed into a corner of A's measured one: its series and lanes are
  // drawn against a time axis of their own along the top, fitted to its span.
  QCustomPlot* ttft = view->dashboard()->plot("ttft");
  QCPGraph* ttft_b = nullptr;
  for (int i = 0; i < ttft->graphCount(); ++i)
    if (ttft->graph(i)->name() == "TTFT · B (dry run) · top axis") ttft_b = ttft->graph(i);
  ASSERT_NE(ttft_b, nullptr);
  EXPECT_EQ(ttft_b->keyAxis(), ttft->xAxis2);
  EXPECT_TRUE(ttft->xAxis2->visible());
  bool b_found = false;
  const QCPRange b_times = ttft_b->getKeyRange(b_found);
  ASSERT_TRUE(b_found);
  EXPECT_GT(b_times.size(), 0.5 * ttft->xAxis2->range().size()) << "B's points spread over its axis";
  EXPECT_LT(ttft->xAxis->range().upper, 1.1 * c->a.metrics.uptime_s + 0.01) << "A's axis fits A's run alone";
  RequestTimeline* timeline = view->dashboard()->timeline();
  EXPECT_TRUE(timeline->xAxis2->visible());
  EXPECT_EQ(timeline->decode_b->valueAxis(), timeline->xAxis2);

  // Both runs' lanes in one chart, each B lane under its A lane and tagged so.
  const std::vector<RequestTimeline::Row>& rows = view->dashboard()->timeline()->rows();
  ASSERT_EQ(rows.size(), 6u);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].run, static_cast<int>(i % 2)) << i;
    EXPECT_EQ(rows[i].lane->id, rows[i - i % 2].lane->id) << i;
  }
  const int lane_pixels = view->dashboard()->timeline()->minimumHeight() / static_cast<int>(rows.size());
  EXPECT_GE(lane_pixels, 9) << "every lane stays readable";

  if (qEnvironmentVariableIsSet("COMPARE_SIMULATED_SCREENSHOT")) {
    w->resize(1680, 1050);
    w->grab().save(qEnvironmentVariable("COMPARE_SIMULATED_SCREENSHOT"));
  }
}

TEST_F(CompareSimulated, TheDeviceComboListsEveryDeviceFile) {
  const QDir devices(QString::fromStdString(::inferscope::test::source_path("resources/devices")));
  const QStringList files = devices.entryList({"*.json"}, QDir::Files, QDir::Name);
  ASSERT_FALSE(files.isEmpty());
  QComboBox& combo = *view->device_picker(0)->combo();
  ASSERT_EQ(combo.count(), files.size());
  for (int i = 0; i < files.size(); ++i) {
    EXPECT_EQ(combo.itemData(i).toString(), files[i]);
    const std::string name = read_device_profile(devices.filePath(files[i]).toStdString()).name;
    EXPECT_EQ(combo.itemText(i).toStdString(), name);
    EXPECT_TRUE(combo.itemData(i, Qt::ToolTipRole).toString().contains("Sources:")) << name;
  }
  EXPECT_FALSE(view->set_simulated(0, "no-such-device.json"));
  EXPECT_FALSE(view->simulated(0));
}

TEST_F(CompareSimulated, ABadDeviceFileIsListedDisabledWithItsError) {
  QTemporaryDir folder;
  QFile bad(folder.filePath("broken.json"));
  ASSERT_TRUE(bad.open(QIODevice::WriteOnly));
  bad.write("{ not json");
  bad.close();
  DevicePicker only_bad(device_files(folder.path()));
  QComboBox& combo = *only_bad.combo();
  ASSERT_EQ(combo.count(), 1);
  EXPECT_TRUE(combo.itemText(0).contains("cannot be read"));
  EXPECT_TRUE(combo.itemData(0, Qt::ToolTipRole).toString().contains("broken.json"));
  EXPECT_FALSE(qobject_cast<QStandardItemModel*>(combo.model())->item(0)->isEnabled());
  QString error;
  EXPECT_FALSE(only_bad.device(&error).has_value());
  EXPECT_FALSE(error.isEmpty());
  EXPECT_FALSE(only_bad.select("broken.json"));
}

TEST_F(CompareSimulated, SimulatedSidesNeedTheLoadedModel) {
  QTemporaryDir empty;
  auto bare = open_window(empty.path());
  CompareView& v = *bare->compare();
  ASSERT_TRUE(v.set_simulated(0, "h100-sxm.json"));
  ASSERT_TRUE(v.set_simulated(1, "h200.json"));
  v.use_workload_file(write_workload(dir, 1, 4));
  EXPECT_FALSE(v.start());
  EXPECT_TRUE(v.status_text().startsWith("Open a model first")) << v.status_text().toStdString();
}

TEST_F(CompareSimulated, ASpeculativeConfigurationCannotBeSimulatedAndSaysSo) {
  EngineConfig config = w->bridge().config();
  config.spec.mode = SpecMode::Ngram;
  view->set_configs(w->bridge().config(), config);
  ASSERT_TRUE(view->set_simulated(1, "h200.json"));
  view->use_workload_file(write_workload(dir, 1, 4));
  ASSERT_TRUE(run_comparison(*view));
  EXPECT_EQ(view->result(), nullptr);
  EXPECT_TRUE(view->status_text().startsWith("simulation B: ")) << view->status_text().toStdString();
}

}  // namespace
}  // namespace inferscope::gui::test
