// The request timeline: lanes built from a known snapshot (waiting, prefill, decode bars merged over
// consecutive steps; a preemption, the wait after it and the recompute as a prefill; TTFT and finish
// marks), the same on a real run on stories260K whose small KV budget forces preemptions, and the
// widget drawing exactly those bars and marks, with hover text naming them.
#include <gtest/gtest.h>

#include <QFile>
#include <QTemporaryDir>
#include <qcustomplot.h>

#include "core/workload/workload_runner.h"
#include "core/model/llama_model.h"
#include "gui/dashboard/request_timeline.h"
#include "tests/gui/offscreen_app.h"
#include "tests/gui/synthetic_metrics.h"
#include "tests/support/test_models.h"

namespace inferscope::gui::test {
namespace {

constexpr double kEps = 1e-9;

// The lane's bars are `expected` (times to kEps).
void expect_segments(const RequestLane& lane, const std::vector<LaneSegment>& expected) {
  ASSERT_EQ(lane.segments.size(), expected.size()) << "request " << lane.id;
  for (size_t i = 0; i < expected.size(); ++i) {
    const LaneSegment &s = lane.segments[i], &e = expected[i];
    EXPECT_EQ(s.kind, e.kind) << "bar " << i << ": " << lane_kind_name(s.kind) << " instead of " << lane_kind_name(e.kind);
    EXPECT_NEAR(s.start_s, e.start_s, kEps) << "bar " << i;
    EXPECT_NEAR(s.end_s, e.end_s, kEps) << "bar " << i;
    EXPECT_EQ(s.tokens, e.tokens) << "bar " << i;
    EXPECT_EQ(s.steps, e.steps) << "bar " << i;
  }
}

TEST(RequestLanes, APreemptedRequestWaitsThenRecomputesAsAPrefill) {
  const std::vector<RequestLane> lanes = request_lanes(synthetic_preemption_snapshot());
  ASSERT_EQ(lanes.size(), 2u);
  // Request 0 ran in every step: one prefill bar, then one decode bar over steps 1..8.
  const RequestLane& r0 = lanes[0];
  EXPECT_EQ(r0.id, 0);
  expect_segments(r0, {{LaneKind::Waiting, 0.99, 1.00, 0, 0}, {LaneKind::Prefill, 1.00, 1.01, 16, 1},
                       {LaneKind::Decode, 1.01, 1.09, 8, 8}});
  EXPECT_TRUE(r0.preemptions_s.empty());
  EXPECT_NEAR(r0.finish_s, 0.99 + 0.10, kEps);
  EXPECT_EQ(r0.finish_reason, "length");

  // Request 1: preempted by step 4, it waits until step 6 recomputes its prompt and output.
  const RequestLane& r1 = lanes[1];
  EXPECT_EQ(r1.id, 1);
  expect_segments(r1, {{LaneKind::Waiting, 0.995, 1.00, 0, 0}, {LaneKind::Prefill, 1.00, 1.01, 16, 1},
                       {LaneKind::Decode, 1.01, 1.04, 3, 3}, {LaneKind::Waiting, 1.04, 1.06, 0, 0},
                       {LaneKind::Prefill, 1.06, 1.07, 19, 1}, {LaneKind::Decode, 1.07, 1.09, 2, 2}});
  ASSERT_EQ(r1.preemptions_s.size(), 1u);
  EXPECT_NEAR(r1.preemptions_s[0], 1.04, kEps);
  // The TTFT mark: arrival + time_to_first_token_seconds.
  EXPECT_DOUBLE_EQ(r1.first_token_s, 0.995 + 0.015);
}

TEST(RequestLanes, AQueuedRequestWaitsUntilNowAndLanesFollowArrival) {
  EngineMetricsSnapshot snap = synthetic_preemption_snapshot();
  RequestMetrics queued;
  queued.id = 7, queued.arrival_s = 0.5;  // arrived first, never scheduled
  snap.requests.push_back(queued);
  const std::vector<RequestLane> lanes = request_lanes(snap);
  ASSERT_EQ(lanes.size(), 3u);
  EXPECT_EQ(lanes[0].id, 7) << "lanes in arrival order";
  expect_segments(lanes[0], {{LaneKind::Waiting, 0.5, snap.uptime_s, 0, 0}});
  EXPECT_LT(lanes[0].first_token_s, 0);
  EXPECT_LT(lanes[0].finish_s, 0);
}

// The run: four requests of 16 prompt tokens that each want 40, on 8 blocks of 16 tokens (room
// for two at a time): the scheduler preempts and recomputes.
WorkloadResult preempting_run(const LlamaModel& model) {
  EngineConfig config;
  config.threads = 2;
  config.kv.kind = KvKind::Paged;
  config.kv.block_size = 16;
  config.kv.prefix_cache = false;
  config.kv.budget_bytes = model.kv_geometry(config.kv_dtype).bytes_per_token() * 16 * 8;
  std::vector<Request> requests;
  for (RequestId id = 0; id < 4; ++id) {
    Request r;
    r.id = id;
    for (int32_t i = 0; i < 16; ++i) r.tokens.push_back(1 + (id * 37 + i * 11) % 500);
    r.prompt_tokens = 16;
    r.max_output_tokens = 40;
    requests.push_back(r);
  }
  WorkloadRunOptions options;
  options.sampling.ignore_eos = true;
  return run_workload(model, config, requests, options);
}

TEST(RequestLanes, ARealRunShowsEveryPreemptionThenTheRecompute) {
  INFERSCOPE_REQUIRE_FILE(path, inferscope::test::shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  const WorkloadResult run = preempting_run(*model);
  ASSERT_GT(run.summary.num_preemptions, 0) << "the budget should force preemptions";
  const std::vector<RequestLane> lanes = request_lanes(run.metrics);
  ASSERT_EQ(lanes.size(), 4u);
  int64_t preemptions = 0;
  for (const RequestLane& lane : lanes) {
    const RequestMetrics& r = *std::find_if(run.metrics.requests.begin(), run.metrics.requests.end(),
                                            [&](const RequestMetrics& m) { return m.id == lane.id; });
    EXPECT_DOUBLE_EQ(lane.first_token_s, r.arrival_s + r.time_to_first_token_seconds) << "TTFT mark, request " << lane.id;
    EXPECT_EQ(static_cast<int32_t>(lane.preemptions_s.size()), r.num_preemptions) << "request " << lane.id;
    preemptions += r.num_preemptions;
    // Each preemption: a wait from that moment, then a prefill of the prompt and what it had generated.
    for (double p : lane.preemptions_s) {
      const auto wait = std::find_if(lane.segments.begin(), lane.segments.end(),
                                     [&](const LaneSegment& s) { return s.kind == LaneKind::Waiting && s.start_s == p; });
      ASSERT_NE(wait, lane.segments.end()) << "request " << lane.id << " does not wait after its preemption at " << p;
      ASSERT_NE(wait + 1, lane.segments.end()) << "request " << lane.id << " never ran again";
      EXPECT_EQ((wait + 1)->kind, LaneKind::Prefill) << "request " << lane.id << " resumed without recomputing";
      EXPECT_DOUBLE_EQ((wait + 1)->start_s, wait->end_s);
      EXPECT_GT((wait + 1)->tokens, r.prompt_tokens) << "the recompute covers the prompt and the output so far";
    }
    // Every token is accounted for: each prefill samples one, each decode step one.
    int32_t decoded = 0, prefills = 0;
    for (const LaneSegment& s : lane.segments) {
      if (s.kind == LaneKind::Decode) decoded += s.tokens;
      prefills += s.kind == LaneKind::Prefill;
      EXPECT_LE(s.start_s, s.end_s);
    }
    EXPECT_EQ(decoded + prefills, r.generation_tokens) << "request " << lane.id;
    // Consecutive bars never share a kind: merged bars are one bar.
    for (size_t i = 1; i < lane.segments.size(); ++i)
      EXPECT_TRUE(lane.segments[i].kind != lane.segments[i - 1].kind || lane.segments[i].start_s > lane.segments[i - 1].end_s)
          << "request " << lane.id << " bar " << i;
  }
  EXPECT_EQ(preemptions, run.summary.num_preemptions);
}

int count(QCPAbstractPlottable* p) { return p->interface1D()->dataCount(); }

TEST(RequestTimelineView, DrawsEveryBarAndMarkAndNamesThemOnHover) {
  offscreen_app();
  RequestTimeline view;
  view.resize(700, 300);
  view.show();
  EXPECT_EQ(view.note(), "waiting for the first request");
  const EngineMetricsSnapshot snap = synthetic_preemption_snapshot();
  view.update_from(snap);
  EXPECT_EQ(view.note(), "");
  ASSERT_EQ(view.lanes().size(), 2u);
  EXPECT_EQ(count(view.waiting), 3);  // both arrivals, and request 1 after its preemption
  EXPECT_EQ(count(view.prefill), 3);
  EXPECT_EQ(count(view.decode), 3);
  ASSERT_EQ(count(view.preemptions), 1);
  EXPECT_NEAR(view.preemptions->interface1D()->dataMainKey(0), 1.04, kEps);
  EXPECT_DOUBLE_EQ(view.preemptions->interface1D()->dataMainValue(0), 1);  // request 1's lane
  ASSERT_EQ(count(view.first_tokens), 2);
  EXPECT_DOUBLE_EQ(view.first_tokens->interface1D()->dataMainKey(0), 0.995 + 0.015);
  EXPECT_DOUBLE_EQ(view.first_tokens->interface1D()->dataMainKey(1), 0.99 + 0.02);
  EXPECT_EQ(count(view.finishes), 2);
  // The bars run from their start to their end on the time axis, in their lane.
  const QCPFinancialData& recompute = *view.prefill->data()->at(2);
  EXPECT_DOUBLE_EQ(recompute.key, 1);
  EXPECT_NEAR(recompute.open, 1.06, kEps);
  EXPECT_NEAR(recompute.close, 1.07, kEps);
  EXPECT_LE(view.xAxis->range().lower, 0.99);
  EXPECT_GE(view.xAxis->range().upper, 1.09);

  view.replot(QCustomPlot::rpImmediateRefresh);
  const double lane1 = view.yAxis->coordToPixel(1);
  const QString over_recompute = view.hover_at({view.xAxis->coordToPixel(1.065), lane1});
  EXPECT_TRUE(over_recompute.startsWith("request 1 · prompt 16 tokens · 6 generated")) << over_recompute.toStdString();
  EXPECT_TRUE(over_recompute.contains("prefill: 19 prompt tokens in 1 step,")) << over_recompute.toStdString();
  const QString over_preemption = view.hover_at({view.xAxis->coordToPixel(1.04), lane1});
  EXPECT_TRUE(over_preemption.contains("preempted at 1.040 s")) << over_preemption.toStdString();
  EXPECT_TRUE(view.hover_at({view.xAxis->coordToPixel(1.05), view.yAxis->coordToPixel(3)}).isEmpty()) << "no lane there";
  EXPECT_GT(distinct_colors(render(view, "request_timeline")), 8);

  EXPECT_EQ(view.scope(), "");  // the local engine: every request has a lane

  // The CSV gives each bar its start and end, and each mark its time, per request.
  const QList<QByteArray> rows = view.csv().split('\n');
  EXPECT_EQ(rows[0], "run,request,kind,start_s,end_s,tokens,steps");
  EXPECT_TRUE(rows.contains(",1,prefill,1.06,1.07,19,1")) << view.csv().toStdString();
  EXPECT_TRUE(rows.contains(",1,preempted,1.04,1.04,,")) << view.csv().toStdString();
  EXPECT_TRUE(rows.contains(",0,first token,1.01,1.01,,")) << view.csv().toStdString();
  EXPECT_EQ(view.csv().count("\n"), 1 + 9 + 1 + 2 + 2) << "a header, 9 bars, 1 preemption, 2 first tokens, 2 finishes";
  // Exported, the file is that CSV, not the generic (time, value) one.
  QTemporaryDir dir;
  view.setObjectName("request_timeline");
  export_plot(view, dir.path());
  QFile file(dir.filePath("request_timeline.csv"));
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  EXPECT_EQ(file.readAll(), view.csv());

  view.clear();
  EXPECT_EQ(count(view.decode), 0);
  EXPECT_EQ(view.note(), "waiting for the first request");
}

// A request served to an HTTP client is tagged with the client's product, and named in full on hover.
TEST(RequestTimelineView, AServedRequestIsLabelledWithItsClient) {
  offscreen_app();
  RequestTimeline view;
  view.resize(700, 300);
  view.show();
  EngineMetricsSnapshot snap = synthetic_preemption_snapshot();
  snap.requests[1].client = "curl/8.5.0 at 127.0.0.1";
  view.update_from(snap);
  view.replot(QCustomPlot::rpImmediateRefresh);
  auto* ticker = dynamic_cast<QCPAxisTickerText*>(view.yAxis->ticker().data());
  ASSERT_NE(ticker, nullptr);
  QStringList ticks;
  for (const QString& tick : ticker->ticks()) ticks << tick;
  EXPECT_EQ(ticks, (QStringList{"req 0", "curl/8.5.0 1"}));
  const QString over = view.hover_at({view.xAxis->coordToPixel(1.065), view.yAxis->coordToPixel(1)});
  EXPECT_TRUE(over.startsWith("request 1 from curl/8.5.0 at 127.0.0.1 · prompt 16 tokens")) << over.toStdString();
}

// On a server the lanes are this client's requests: the corner says so, naming the server.
TEST(RequestTimelineView, OnAServerItSaysTheLanesAreThisClientsOnly) {
  offscreen_app();
  RequestTimeline view;
  EngineMetricsSnapshot snap = synthetic_preemption_snapshot();
  snap.source = "vLLM at http://gpu:8000";
  view.update_from(snap);
  EXPECT_EQ(view.lanes().size(), 2u);
  EXPECT_EQ(view.scope(), "this client's requests only: vLLM at http://gpu:8000 lists no one's timings");
  view.clear();
  EXPECT_EQ(view.scope(), "");
}

}  // namespace
}  // namespace inferscope::gui::test
