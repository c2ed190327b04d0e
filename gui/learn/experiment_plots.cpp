#include "gui/learn/experiment_plots.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QTextBrowser>
#include <QVBoxLayout>
#include <algorithm>
#include <qcustomplot.h>

#include "core/model/llama_model.h"
#include "gui/blocks/block_table_view.h"
#include "gui/dashboard/request_timeline.h"
#include "gui/dashboard/roofline_view.h"
#include "gui/dashboard/spec_plots.h"
#include "gui/learn/kv_token_picture.h"
#include "gui/learn/run_texts.h"
#include "gui/plot/plot_setup.h"
#include "gui/plot/plot_units.h"

namespace inferscope::gui {
namespace {

const QColor kRunColors[] = {QColor(31, 119, 180), QColor(255, 127, 14), QColor(44, 160, 44),
                             QColor(214, 39, 40), QColor(148, 103, 189), QColor(140, 86, 75)};

const MeasuredRun* find_run(const ExperimentResult& r, const std::string& name) {
  const auto it = std::find_if(r.runs.begin(), r.runs.end(), [&](const MeasuredRun& m) { return m.name == name; });
  return it == r.runs.end() ? nullptr : &*it;
}

// A Learn chart: its legend (when it has one) in a row of its own above the data, and the wheel
// scrolling the lesson, as on the dashboard.
QCustomPlot* learn_plot(QWidget* parent, bool legend) {
  auto* p = new QCustomPlot(parent);
  if (legend) legend_in_own_row(p, 0);
  scroll_with_wheel(p);
  return p;
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
  auto* p = learn_plot(parent, false);
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  const auto runs = plot_runs(plot, r);
  double top = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto it = r.values.find(runs[i]->name + "." + plot.value);
    const double v = it == r.values.end() ? 0 : it->second;
    // Each run's bar in the colour its lines have in the other charts.
    auto* bar = new QCPBars(p->xAxis, p->yAxis);
    bar->setName(QString::fromStdString(runs[i]->name));
    bar->setBrush(kRunColors[i % std::size(kRunColors)]);
    bar->setPen(QPen(kRunColors[i % std::size(kRunColors)].darker(130)));
    bar->addData(static_cast<double>(i), v);
    ticker->addTick(static_cast<double>(i), QString::fromStdString(runs[i]->name));
    top = std::max(top, v);
  }
  p->xAxis->setTicker(ticker);
  p->xAxis->grid()->setVisible(false);  // a grid line at each tick would run through the middle of its bar
  p->xAxis->setTickLabelRotation(runs.size() > 4 ? 30 : 0);
  p->xAxis->setRange(-0.6, static_cast<double>(runs.size()) - 0.4);
  p->yAxis->setRange(0, top > 0 ? top * 1.15 : 1);
  p->yAxis->setLabel(QString::fromStdString(plot.title));
  // Values named in bytes or seconds are labelled in MiB or ms (experiment_values.h's names).
  const QString value = QString::fromStdString(plot.value);
  if (value.contains("bytes")) set_axis_unit(p->yAxis, Unit::Bytes);
  if (value.contains("seconds") && !value.contains("per_second")) set_axis_unit(p->yAxis, Unit::Seconds);
  return p;
}

QCustomPlot* steps_plot(const ExperimentPlot& plot, const ExperimentResult& r, QWidget* parent) {
  auto* p = learn_plot(parent, true);
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
  const auto runs = plot_runs(plot, r);
  for (const MeasuredRun* run : runs) {
    auto* column = new QVBoxLayout;
    // A run's name tells runs apart; alone, it would only float over the chart.
    if (runs.size() > 1) column->addWidget(new QLabel(QString::fromStdString(run->name) + QObject::tr(" at its fullest"), box));
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

// One request timeline per run, all on one time scale (the longest run's), so their lengths compare.
QWidget* timeline_plot(const ExperimentPlot& plot, const ExperimentResult& r, QWidget* parent) {
  auto* box = new QWidget(parent);
  auto* column = new QVBoxLayout(box);
  std::vector<RequestTimeline*> timelines;
  double end = 0;
  const auto runs = plot_runs(plot, r);
  for (const MeasuredRun* run : runs) {
    if (runs.size() > 1) column->addWidget(new QLabel(QString::fromStdString(run->name), box));
    auto* timeline = new RequestTimeline(box);
    timeline->update_from(run->result.metrics);
    timeline->setMinimumHeight(std::clamp(40 + 22 * static_cast<int>(timeline->lanes().size()), 160, 420));
    column->addWidget(timeline);
    timelines.push_back(timeline);
    end = std::max(end, timeline->xAxis->range().upper);
  }
  for (RequestTimeline* timeline : timelines) timeline->xAxis->setRange(0, end);
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

// One token's K and V at every layer, in the model's numbers (the first run's cache).
QWidget* kv_token_plot(const ExperimentResult& r, QWidget* parent) {
  KvTokenShape shape;
  shape.layers = static_cast<int32_t>(r.values.at("model.n_layers"));
  shape.kv_heads = static_cast<int32_t>(r.values.at("model.n_kv_heads"));
  shape.query_heads = static_cast<int32_t>(r.values.at("model.n_heads"));
  shape.head_dim = static_cast<int32_t>(r.values.at("model.head_dim"));
  shape.bytes_per_token = r.runs.empty() ? 0 : r.runs.front().kv_bytes_per_token;
  shape.window = static_cast<int32_t>(r.values.at("model.sliding_window"));
  shape.local_layers = static_cast<int32_t>(r.values.at("model.local_layers"));
  return new KvTokenPicture(shape, parent);
}

// Rich text per run (prompts with their cached part, or outputs as speculation made them).
QWidget* run_text_plot(const ExperimentPlot& plot, const ExperimentResult& r, const LlamaModel& model, QWidget* parent) {
  auto* box = new QWidget(parent);
  auto* column = new QVBoxLayout(box);
  const auto runs = plot_runs(plot, r);
  for (const MeasuredRun* run : runs) {
    if (runs.size() > 1) column->addWidget(new QLabel("<b>" + QString::fromStdString(run->name).toHtmlEscaped() + "</b>", box));
    auto* text = new QTextBrowser(box);
    text->setHtml(plot.kind == "prefix_hits" ? prefix_hits_html(*run, model) : spec_tokens_html(*run, model));
    text->setMinimumHeight(220);
    column->addWidget(text);
  }
  return box;
}

// The attention sweep's prefill phase: time per call and scratch per context, naive and flash, with
// the crossover marked.
QWidget* attention_sweep_plot(const ExperimentResult& r, QWidget* parent) {
  auto* box = new QWidget(parent);
  auto* row = new QHBoxLayout(box);
  const auto crossover = r.values.find("sweep.prefill.crossover");
  for (const bool scratch : {false, true}) {
    auto* p = learn_plot(box, true);
    QSharedPointer<LogUnitTicker> x_ticker(new LogUnitTicker(Unit::Count));
    p->xAxis->setScaleType(QCPAxis::stLogarithmic);
    p->xAxis->setTicker(x_ticker);
    p->xAxis->setLabel(QObject::tr("context (tokens, prefill of all of them)"));
    if (!scratch) {
      p->yAxis->setScaleType(QCPAxis::stLogarithmic);
      p->yAxis->setTicker(QSharedPointer<LogUnitTicker>(new LogUnitTicker(Unit::Seconds)));
    } else {
      set_axis_unit(p->yAxis, Unit::Bytes);
    }
    p->yAxis->setLabel(scratch ? QObject::tr("scratch memory") : QObject::tr("seconds per attention call"));
    for (const auto& [impl, color] : {std::pair{"naive", kRunColors[1]}, std::pair{"flash", kRunColors[0]}}) {
      QCPGraph* g = add_graph(p, QString(impl), color, Look::Line);
      g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
      for (const AttentionBenchRow& row_data : r.attention_sweep) {
        if (row_data.phase != "prefill" || row_data.implementation != impl) continue;
        g->addData(row_data.context, scratch ? static_cast<double>(row_data.scratch_bytes) : row_data.seconds_mean);
      }
    }
    p->rescaleAxes();
    // Room around the points: a factor on the logarithmic axes, 10% above on the linear one.
    p->xAxis->setRange(p->xAxis->range().lower / 1.3, p->xAxis->range().upper * 1.3);
    if (scratch) {
      p->yAxis->setRange(0, p->yAxis->range().upper * 1.1);
    } else {
      p->yAxis->setRange(p->yAxis->range().lower / 1.5, p->yAxis->range().upper * 1.5);
    }
    if (!scratch && crossover != r.values.end() && crossover->second > 0) {
      auto* line = new QCPItemStraightLine(p);
      line->point1->setCoords(crossover->second, 1e-9);
      line->point2->setCoords(crossover->second, 1);
      line->setPen(QPen(Qt::gray, 1, Qt::DashLine));
      auto* label = new QCPItemText(p);
      label->position->setType(QCPItemPosition::ptAxisRectRatio);
      label->position->setCoords(0.02, 0.04);
      label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
      label->setText(QObject::tr("flash faster from %1 tokens on").arg(crossover->second));
    }
    row->addWidget(p);
  }
  return box;
}

// The speculating runs' acceptance per draft position (and over time), as the dashboard draws it.
QWidget* acceptance_plot(const ExperimentPlot& plot, const ExperimentResult& r, QWidget* parent) {
  auto* box = new QWidget(parent);
  auto* row = new QHBoxLayout(box);
  for (const MeasuredRun* run : plot_runs(plot, r)) {
    if (run->result.summary.spec.num_drafts == 0) continue;
    auto* over_time = learn_plot(box, true);
    auto* by_position = learn_plot(box, true);
    for (QCustomPlot* p : {over_time, by_position}) {
      set_axis_unit(p->yAxis, Unit::Fraction);
      p->yAxis->setLabel(QString::fromStdString(run->name) + QObject::tr(": acceptance"));
    }
    over_time->xAxis->setLabel(QObject::tr("seconds since the run started"));
    SpecPlots spec(over_time, by_position);
    spec.update_from(run->result.metrics);
    // Drafting an n-gram takes microseconds, verifying milliseconds: on a log axis both lines show.
    set_log_axis_unit(over_time->yAxis2, Unit::Seconds);
    over_time->rescaleAxes();
    over_time->yAxis->setRange(0, 1.02);
    over_time->yAxis2->setRange(over_time->yAxis2->range().lower / 2, over_time->yAxis2->range().upper * 2);
    by_position->xAxis->setRange(0.4, run->result.summary.spec.num_accepted_tokens_per_pos.size() + 0.6);
    by_position->yAxis->setRange(0, 1.02);
    row->addWidget(by_position);
    row->addWidget(over_time);
  }
  return box;
}

}  // namespace

QString experiment_plot_caption(const ExperimentPlot& plot) {
  if (plot.kind == "bars") return QString::fromStdString(plot.title);
  if (plot.kind == "steps") return QObject::tr("Tokens computed per engine step");
  if (plot.kind == "kv_blocks") return QObject::tr("Block tables at each run's fullest moment");
  if (plot.kind == "timeline") return QObject::tr("Request timeline: waiting (grey), prefill (orange), decode (green), first token, finish");
  if (plot.kind == "kv_token") return QObject::tr("One token adds a K and a V row per KV head at every layer");
  if (plot.kind == "prefix_hits") return QObject::tr("Each prompt: the part found in the prefix cache (green) and the part computed");
  if (plot.kind == "attention_sweep") return QObject::tr("One attention call at each context, naive vs flash: time and scratch memory");
  if (plot.kind == "spec_tokens") return QObject::tr("The output, each token coloured by how speculation produced it");
  if (plot.kind == "acceptance") return QObject::tr("Acceptance per draft position, and per verify step over time");
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
  } else if (plot.kind == "kv_token") {
    body = kv_token_plot(result, box);
  } else if (plot.kind == "prefix_hits" || plot.kind == "spec_tokens") {
    body = run_text_plot(plot, result, model, box);
  } else if (plot.kind == "attention_sweep") {
    body = attention_sweep_plot(result, box);
  } else if (plot.kind == "acceptance") {
    body = acceptance_plot(plot, result, box);
  } else {
    body = roofline_plot(plot, result, box);
  }
  // At least what its own layout needs (a column of labelled views), and never less than 260 px.
  body->setMinimumHeight(std::max({body->minimumHeight(), body->minimumSizeHint().height(), 260}));
  layout->addWidget(body);
  return box;
}

}  // namespace inferscope::gui
