#include "gui/learn/experiment_plots.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>
#include <algorithm>
#include <qcustomplot.h>

#include "core/model/llama_model.h"
#include "gui/blocks/block_table_view.h"
#include "gui/dashboard/request_timeline.h"
#include "gui/dashboard/roofline_view.h"
#include "gui/plot/plot_setup.h"

namespace inferscope::gui {
namespace {

const QColor kRunColors[] = {QColor(31, 119, 180), QColor(255, 127, 14), QColor(44, 160, 44),
                             QColor(214, 39, 40), QColor(148, 103, 189), QColor(140, 86, 75)};

const MeasuredRun* find_run(const ExperimentResult& r, const std::string& name) {
  const auto it = std::find_if(r.runs.begin(), r.runs.end(), [&](const MeasuredRun& m) { return m.name == name; });
  return it == r.runs.end() ? nullptr : &*it;
}

// The runs a plot names (all of them when it names none).
std::vector<const MeasuredRun*> plot_runs(const ExperimentPlot& plot, const ExperimentResult& r) {
  std::vector<const MeasuredRun*> runs;
  if (plot.runs.empty()) {
    for (const MeasuredRun& m : r.runs) runs.push_back(&m);
  }
  for (const std::string& name : plot.runs) {
    if (const MeasuredRun* m = find_run(r, name)) runs.push_back(m);
  }
  return runs;
}

QCustomPlot* bars_plot(const ExperimentPlot& plot, const ExperimentResult& r, QWidget* parent) {
  auto* p = new QCustomPlot(parent);
  auto* bars = new QCPBars(p->xAxis, p->yAxis);
  bars->setBrush(kRunColors[0]);
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  const auto runs = plot_runs(plot, r);
  double top = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto it = r.values.find(runs[i]->name + "." + plot.value);
    const double v = it == r.values.end() ? 0 : it->second;
    bars->addData(static_cast<double>(i), v);
    ticker->addTick(static_cast<double>(i), QString::fromStdString(runs[i]->name));
    top = std::max(top, v);
  }
  p->xAxis->setTicker(ticker);
  p->xAxis->setTickLabelRotation(runs.size() > 4 ? 30 : 0);
  p->xAxis->setRange(-0.6, static_cast<double>(runs.size()) - 0.4);
  p->yAxis->setRange(0, top > 0 ? top * 1.15 : 1);
  p->yAxis->setLabel(QString::fromStdString(plot.title));
  return p;
}

QCustomPlot* steps_plot(const ExperimentPlot& plot, const ExperimentResult& r, QWidget* parent) {
  auto* p = new QCustomPlot(parent);
  p->legend->setVisible(true);
  double right = 0, top = 0;
  const auto runs = plot_runs(plot, r);
  for (size_t i = 0; i < runs.size(); ++i) {
    QCPGraph* g = add_graph(p, QString::fromStdString(runs[i]->name), kRunColors[i % std::size(kRunColors)], Look::Line);
    g->setLineStyle(QCPGraph::lsStepLeft);
    for (const StepMetrics& st : runs[i]->result.metrics.steps) {
      const double tokens = st.prefill_tokens + st.decode_tokens;
      g->addData(st.time_s, tokens);
      right = std::max(right, st.time_s);
      top = std::max(top, tokens);
    }
  }
  p->xAxis->setLabel(QObject::tr("seconds since the run started"));
  p->yAxis->setLabel(QObject::tr("tokens computed in the step"));
  p->xAxis->setRange(0, right > 0 ? right : 1);
  p->yAxis->setRange(0, top > 0 ? top * 1.1 : 1);
  return p;
}

QWidget* kv_blocks_plot(const ExperimentPlot& plot, const ExperimentResult& r, const LlamaModel& model, QWidget* parent) {
  auto* box = new QWidget(parent);
  auto* row = new QHBoxLayout(box);
  for (const MeasuredRun* run : plot_runs(plot, r)) {
    auto* column = new QVBoxLayout;
    column->addWidget(new QLabel(QString::fromStdString(run->name) + QObject::tr(" at its fullest"), box));
    auto* view = new BlockTableView(box);
    view->set_token_decoder([&model](std::span<const int32_t> ids) {
      return QString::fromStdString(model.tokenizer().decode(std::vector<TokenId>(ids.begin(), ids.end())));
    });
    view->update_from(run->peak_blocks);
    if (!run->peak_blocks.sequences.empty()) view->select_sequence(run->peak_blocks.sequences.front().id);
    view->setMinimumHeight(320);
    column->addWidget(view);
    row->addLayout(column);
  }
  return box;
}

// One request timeline per run, each on its own time axis.
QWidget* timeline_plot(const ExperimentPlot& plot, const ExperimentResult& r, QWidget* parent) {
  auto* box = new QWidget(parent);
  auto* column = new QVBoxLayout(box);
  for (const MeasuredRun* run : plot_runs(plot, r)) {
    column->addWidget(new QLabel(QString::fromStdString(run->name), box));
    auto* timeline = new RequestTimeline(box);
    timeline->update_from(run->result.metrics);
    timeline->setMinimumHeight(std::clamp(40 + 22 * static_cast<int>(timeline->lanes().size()), 160, 420));
    column->addWidget(timeline);
  }
  return box;
}

// The first run's steps as dots, a second run's hollow, under the roofs measured with the experiment.
QWidget* roofline_plot(const ExperimentPlot& plot, const ExperimentResult& r, QWidget* parent) {
  auto* view = new RooflineView(parent);
  view->set_roofs(MachineRoofs{r.values.at("machine.peak_flops"), r.values.at("machine.read_bandwidth")});
  const auto runs = plot_runs(plot, r);
  if (!runs.empty()) view->update_from(runs[0]->result.metrics);
  if (runs.size() > 1) view->set_overlay(&runs[1]->result.metrics);
  view->setMinimumHeight(360);
  return view;
}

}  // namespace

QString experiment_plot_caption(const ExperimentPlot& plot) {
  if (plot.kind == "bars") return QString::fromStdString(plot.title);
  if (plot.kind == "steps") return QObject::tr("Tokens computed per engine step");
  if (plot.kind == "kv_blocks") return QObject::tr("Block tables at each run's fullest moment");
  if (plot.kind == "timeline") return QObject::tr("Request timeline: waiting (grey), prefill (orange), decode (green), first token, finish");
  return QObject::tr("Roofline: every engine step by FLOPs per byte read, under this machine's measured roofs");
}

QWidget* make_experiment_plot(const ExperimentPlot& plot, const ExperimentResult& result, const LlamaModel& model,
                              QWidget* parent) {
  auto* box = new QWidget(parent);
  auto* layout = new QVBoxLayout(box);
  auto* caption = new QLabel("<b>" + experiment_plot_caption(plot).toHtmlEscaped() + "</b>", box);
  layout->addWidget(caption);
  QWidget* body = nullptr;
  if (plot.kind == "bars") {
    body = bars_plot(plot, result, box);
  } else if (plot.kind == "steps") {
    body = steps_plot(plot, result, box);
  } else if (plot.kind == "kv_blocks") {
    body = kv_blocks_plot(plot, result, model, box);
  } else if (plot.kind == "timeline") {
    body = timeline_plot(plot, result, box);
  } else {
    body = roofline_plot(plot, result, box);
  }
  body->setMinimumHeight(std::max(body->minimumHeight(), 260));
  layout->addWidget(body);
  return box;
}

}  // namespace inferscope::gui
