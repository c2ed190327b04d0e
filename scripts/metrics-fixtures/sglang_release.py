"""Drive an SGLang release's own metrics code (0.5.23: sglang/srt/observability/
metrics_collector.py SchedulerMetricsCollector / TokenizerMetricsCollector, SchedulerStats,
QueueCount) with the scripted load, in real scheduler and tokenizer-manager processes that
all write to one PROMETHEUS_MULTIPROC_DIR (SGLang always runs prometheus_client in
multiprocess mode: utils set_prometheus_multiproc_dir), and scrape it the way the release's
/metrics does (CollectorRegistry + MultiProcessCollector, add_prometheus_middleware).

What the scheduler reports and when follows the release's scheduler-side reporter
(0.5.23: managers/scheduler_components/metrics_reporter.py report_prefill_stats /
report_decode_stats, batch_result_processor.py num_generated_tokens / update_spec_metrics,
observability/req_time_stats.py set_forward_entry_time -> observe_queue_time); the
tokenizer manager's per-request calls follow tokenizer_manager.py collect_metrics."""

import logging
import multiprocessing as mp
import shutil
import tempfile
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import load as L
import sim
from child_process import Cfg, prometheus_setup, public

SOURCE_PREFIXES = ["sglang/srt/observability/", "sglang/srt/metrics/",
                   "sglang/srt/utils/gauge_histogram.py", "sglang/srt/utils/common.py",
                   "sglang/srt/utils.py", "sglang/srt/disaggregation/utils.py",
                   "sglang/srt/managers/scheduler_components/metrics_reporter.py",
                   "sglang/srt/managers/scheduler_components/batch_result_processor.py",
                   "sglang/srt/managers/scheduler_components/pool_stats_observer.py",
                   "sglang/srt/managers/scheduler_metrics_mixin.py",
                   "sglang/srt/managers/scheduler.py", "sglang/srt/managers/tokenizer_manager.py",
                   "sglang/srt/entrypoints/http_server.py",
                   "sglang/srt/arg_groups/fields/observability.py", "sglang/srt/server_args.py"]
REAL_0523 = ["sglang.srt.observability.metrics_collector", "sglang.srt.observability.utils",
             "sglang.srt.observability.scheduler_stage_metrics",
             "sglang.srt.utils.gauge_histogram"]
REAL_OLD = ["sglang.srt.metrics.collector", "sglang.srt.metrics.utils"]
TOKENIZER_PID = 101
SCHED_PID = {(0, 0): 201, (0, 1): 202, (1, 0): 211, (1, 1): 212}   # (dp, tp) -> fake pid
DECODE_LOG_INTERVAL = 40          # observability.decode_log_interval default (0.5.23)
NUM_DRAFT_TOKENS = L.NUM_SPEC_TOKENS + 1   # speculative_num_draft_tokens (steps 3, topk 1)
KV_TOKENS = L.NUM_GPU_BLOCKS * L.BLOCK_SIZE   # max_total_num_tokens (page size 1)


class _Struct:           # msgspec.Struct stand-in (DPBalanceStats is never built here)
    def __init_subclass__(cls, **kw):
        pass


def _runtime_context(cfg):
    ctx = Cfg(is_config_namespace_published=lambda ns: False)
    obs = Cfg(enable_metrics=True,
               enable_metrics_for_all_schedulers=cfg["all_schedulers"],
               decode_log_interval=DECODE_LOG_INTERVAL)
    par = Cfg(tp_rank=cfg.get("tp_rank", 0), attn_tp_rank=cfg.get("tp_rank", 0),
               attn_cp_rank=0, pp_rank=0, moe_ep_rank=0, dp_rank=cfg.get("dp_rank"),
               attn_dp_rank=0)
    sched = Cfg(enable_priority_scheduling=cfg["priority"],
                 prefill_delayer_max_delay_passes=30)
    serving = Cfg(served_model_name=L.MODEL, enable_streaming_session=False)
    disagg = Cfg(disaggregation_mode="null", enable_pd_role_switch=False)
    return {"get_context": lambda: ctx, "get_observability": lambda: obs,
            "get_parallel": lambda: par, "get_schedule": lambda: sched,
            "get_serving": lambda: serving, "get_disagg": lambda: disagg,
            "exports_expert_balancedness_to_prometheus": lambda: False}


def _load(root: Path, cfg):
    import importlib
    import stubs
    extra = {
        "sglang.srt.runtime_context": _runtime_context(cfg),
        "sglang.srt.disaggregation.utils": stubs.class_from_source(
            root / "sglang/srt/disaggregation/utils.py", ["DisaggregationMode"],
            preamble="from enum import Enum\n"),
        "sglang.srt.utils": {"get_bool_env_var": lambda *a, **k: False},
        "msgspec": {"Struct": _Struct},
    }
    if _new_layout(root):
        real = [m for m in REAL_0523 if (root / (m.replace(".", "/") + ".py")).exists()]
        mod = "sglang.srt.observability.metrics_collector"
    else:
        real = [m for m in REAL_OLD if (root / (m.replace(".", "/") + ".py")).exists()]
        mod = "sglang.srt.metrics.collector"
    stubs.install(root, "sglang", real, extra, stub_prefixes=["msgspec"])
    logging.getLogger("sglang").setLevel(logging.ERROR)
    return importlib.import_module(mod)


def _new_layout(root: Path):
    return (Path(root) / "sglang/srt/observability/metrics_collector.py").exists()


# ---------------------------------------------------------------------------------------
# scheduler process (one per dp rank x tp rank)
# ---------------------------------------------------------------------------------------

class _DecodeLog:
    """The scheduler's decode log: every DECODE_LOG_INTERVAL decode steps, the tokens generated since
    the last log over the time since it (the gen_throughput gauge)."""

    def _decode_log_due(self, t, tokens):
        self.num_generated_tokens += tokens
        self.forward_ct_decode = (self.forward_ct_decode + 1) % (1 << 30)
        if self.forward_ct_decode % DECODE_LOG_INTERVAL != 0:
            return False
        gap = t - self.last_decode_tic
        self.last_decode_tic = t
        self.last_gen_throughput = self.num_generated_tokens / gap
        self.num_generated_tokens = 0
        return True


class _Reporter(_DecodeLog):
    """The release's scheduler-side reporter state (metrics_reporter.py, 0.5.23)."""

    def __init__(self, mc, collector, priority):
        self.mc, self.c, self.priority = mc, collector, priority
        self.stats = mc.SchedulerStats()
        self.last_decode_tic = 0.0
        self.last_gen_throughput = 0.0
        self.num_generated_tokens = 0
        self.forward_ct_decode = 0
        self.spec_accept_tokens = self.spec_correct = self.spec_forward_ct = 0
        self.cache_window = []          # (t, hits, total), SGLANG_CACHE_HIT_RATE_WINDOW_SECONDS

    def _qc(self, prios):
        return self.mc.QueueCount.from_reqs([SimpleNamespace(priority=p) for p in prios],
                                            self.priority)

    def _pool(self, ev):
        u = ev["running_tokens"] / KV_TOKENS
        self.stats.num_used_tokens = ev["running_tokens"]
        self.stats.token_usage = round(u, 2)
        self.stats.full_token_usage = u
        self.stats.kv_used_tokens = ev["running_tokens"]
        self.stats.kv_available_tokens = KV_TOKENS - ev["running_tokens"] - ev["evictable"]
        self.stats.kv_evictable_tokens = ev["evictable"]

    def prefill(self, t, ev):
        c = self.c
        for q in ev["queue_times"]:          # set_forward_entry_time, one per request
            c.observe_queue_time(q)
        c.increment_prefill_cuda_graph_pass(value=False)
        c.increment_realtime_tokens(prefill_compute_tokens=ev["input"],
                                    prefill_cache_tokens=ev["hit"], dp_cooperation_info=None)
        eff_in = ev["input"] - ev["re_input"]
        eff_hit = ev["hit"] - ev["re_hit"]
        total = eff_in + eff_hit
        c.increment_effective_prefill_tokens(input_tokens=eff_in, device_hit_tokens=eff_hit,
                                             host_hit_tokens=0, storage_hit_tokens=0)
        s = self.stats
        s.new_token_ratio = 0.0
        s.num_running_reqs = self._qc(ev["running_prios"])
        s.num_queue_reqs = self._qc(ev["waiting_prios"])
        s.num_grammar_queue_reqs = 0
        s.cache_hit_rate = eff_hit / total if total > 0 else 0.0
        s.gen_throughput = self.last_gen_throughput if t - self.last_decode_tic <= 30 else 0.0
        self._pool(ev)
        s.num_retracted_reqs = s.num_paused_reqs = 0
        c.log_stats(s)
        return dict(kind="prefill", running=s.num_running_reqs.total,
                    waiting=s.num_queue_reqs.total, token_usage=s.token_usage,
                    cache_hit_rate=s.cache_hit_rate, gen_throughput=s.gen_throughput,
                    spec_accept_length=s.spec_accept_length,
                    spec_accept_rate=s.spec_accept_rate)

    def decode(self, t, ev):
        c = self.c
        n = ev["tokens"]
        self.spec_accept_tokens += n
        self.spec_correct += ev["correct"]
        self.spec_forward_ct += ev["bs"]
        c.increment_realtime_tokens(decode_tokens=n, dp_cooperation_info=None)
        if not self._decode_log_due(t, n):
            return None
        acc_len = self.spec_accept_tokens / self.spec_forward_ct
        total_draft = self.spec_forward_ct * (NUM_DRAFT_TOKENS - 1)
        acc_rate = self.spec_correct / total_draft if total_draft > 0 else 0
        self.spec_accept_tokens = self.spec_correct = self.spec_forward_ct = 0
        s = self.stats
        s.num_running_reqs = self._qc(ev["running_prios"])
        s.num_queue_reqs = self._qc(ev["waiting_prios"])
        s.num_grammar_queue_reqs = 0
        s.gen_throughput = self.last_gen_throughput
        s.decode_sum_seq_lens = ev["running_tokens"]
        self._pool(ev)
        s.spec_accept_length = acc_len
        s.spec_accept_rate = acc_rate
        s.spec_num_steps = L.NUM_SPEC_TOKENS
        s.spec_num_draft_tokens = NUM_DRAFT_TOKENS
        s.num_retracted_reqs = s.num_paused_reqs = 0
        c.log_stats(s)
        return dict(kind="decode", running=s.num_running_reqs.total,
                    waiting=s.num_queue_reqs.total, token_usage=s.token_usage,
                    cache_hit_rate=s.cache_hit_rate, gen_throughput=s.gen_throughput,
                    spec_accept_length=acc_len, spec_accept_rate=acc_rate)


class _OldReporter(_DecodeLog):
    """scheduler_metrics_mixin.py log_prefill_stats / log_decode_stats (0.4.10-style)."""

    def __init__(self, mc, collector):
        self.mc, self.c = mc, collector
        self.stats = mc.SchedulerStats()
        self.last_decode_tic = 0.0
        self.last_gen_throughput = 0.0
        self.num_generated_tokens = 0
        self.forward_ct_decode = 0
        self.spec_tokens = self.spec_forward_ct = 0
        self.names = set(mc.SchedulerStats.__dataclass_fields__)

    def _set(self, **kw):
        for k, v in kw.items():
            if k in self.names:
                setattr(self.stats, k, v)

    def _out(self, kind):
        s = self.stats
        return dict(kind=kind, running=s.num_running_reqs, waiting=s.num_queue_reqs,
                    token_usage=s.token_usage, cache_hit_rate=s.cache_hit_rate,
                    gen_throughput=s.gen_throughput, spec_accept_length=s.spec_accept_length,
                    spec_accept_rate=getattr(s, "spec_accept_rate", None))

    def prefill(self, t, ev):
        total = ev["input"] + ev["hit"]
        self._set(num_running_reqs=len(ev["running_prios"]), num_used_tokens=ev["running_tokens"],
                  token_usage=round(ev["running_tokens"] / KV_TOKENS, 2),
                  num_queue_reqs=len(ev["waiting_prios"]),
                  cache_hit_rate=ev["hit"] / total if total > 0 else 0.0,
                  avg_request_queue_latency=sum(ev["queue_times"]) / len(ev["queue_times"])
                  if ev["queue_times"] else 0.0)
        self.c.log_stats(self.stats)
        return self._out("prefill")

    def decode(self, t, ev):
        self.spec_tokens += ev["tokens"]
        self.spec_forward_ct += ev["bs"]
        if not self._decode_log_due(t, ev["tokens"]):
            return None
        acc_len = self.spec_tokens / self.spec_forward_ct
        self.spec_tokens = self.spec_forward_ct = 0
        self._set(num_running_reqs=len(ev["running_prios"]), num_used_tokens=ev["running_tokens"],
                  token_usage=round(ev["running_tokens"] / KV_TOKENS, 2), cache_hit_rate=0.0,
                  gen_throughput=self.last_gen_throughput,
                  num_queue_reqs=len(ev["waiting_prios"]), num_grammar_queue_reqs=0,
                  spec_accept_length=acc_len, total_retracted_reqs=0)
        self.c.log_stats(self.stats)
        return self._out("decode")


class _MidReporter(_OldReporter):
    """0.5.3 / 0.5.4: scheduler_metrics_mixin.py log_prefill_stats / log_decode_stats
    (0.5.4 adds spec_accept_rate), and scheduler.py get_new_batch_prefill: every request of
    the new batch gets req.add_latency(RequestStage.PREFILL_WAITING) (schedule_batch.py,
    per_stage_req_latency_seconds{stage="prefill_waiting"}, time since the Req was created
    or since its last add_latency) and, once per request (forward_entry_time == 0),
    observe_queue_time(forward_entry_time - wait_queue_entry_time). Both are gated by
    enable_metrics only, log_stats by current_scheduler_metrics_enabled()."""

    PREFILL_WAITING = "prefill_waiting"      # schedule_batch.py RequestStage.PREFILL_WAITING

    def __init__(self, mc, collector, log_stats):
        super().__init__(mc, collector)
        self.log = log_stats
        self.retracted = 0                   # scheduler.num_retracted_reqs

    def _common(self, ev):
        used = ev["running_tokens"]
        self._set(num_running_reqs=len(ev["running_prios"]), num_running_reqs_offline_batch=0,
                  num_used_tokens=used, token_usage=used / KV_TOKENS,
                  num_queue_reqs=len(ev["waiting_prios"]), num_grammar_queue_reqs=0,
                  num_retracted_reqs=self.retracted, num_paused_reqs=0)
        self.retracted = 0

    def prefill(self, t, ev):
        if ev["retracted"]:
            self.retracted = ev["retracted"]
        for w in ev["prefill_waits"]:
            self.c.observe_per_stage_req_latency(self.PREFILL_WAITING, w)
        out = None
        if self.log:
            total = ev["input"] + ev["hit"]
            self._common(ev)
            self._set(cache_hit_rate=ev["hit"] / total if total > 0 else 0.0)
            self.c.log_stats(self.stats)
            out = self._out("prefill")
        for q in ev["queue_times"]:
            self.c.observe_queue_time(q)
        return out

    def decode(self, t, ev):
        if ev["retracted"]:
            self.retracted = ev["retracted"]
        self.num_generated_tokens += ev["tokens"]
        self.spec_tokens += ev["tokens"]
        self.spec_forward_ct += ev["bs"]
        self.forward_ct_decode = (self.forward_ct_decode + 1) % (1 << 30)
        if not self.log or self.forward_ct_decode % DECODE_LOG_INTERVAL != 0:
            return None
        gap = t - self.last_decode_tic
        self.last_decode_tic = t
        self.last_gen_throughput = self.num_generated_tokens / gap
        self.num_generated_tokens = 0
        acc_len = self.spec_tokens / self.spec_forward_ct
        total_draft = self.spec_forward_ct * (L.NUM_SPEC_TOKENS + 1)   # speculative_num_steps + 1
        acc_rate = self.spec_tokens / total_draft if total_draft > 0 else 0
        self.spec_tokens = self.spec_forward_ct = 0
        self._common(ev)
        self._set(gen_throughput=self.last_gen_throughput, cache_hit_rate=0.0,
                  spec_accept_rate=acc_rate, spec_accept_length=acc_len)
        self.c.log_stats(self.stats)
        return self._out("decode")


def _is_mid(mc):
    """0.5.3 / 0.5.4 style sglang/srt/metrics/collector.py (queue-time histogram, tokenizer
    calls taking a labels dict)."""
    return hasattr(mc.SchedulerMetricsCollector, "observe_queue_time")


def _serve_steps(conn, clock, collector, reporter):
    """Says the collector's labels, then reports each engine step the parent sends until "exit"."""
    conn.send(("ok", dict(labels={k: str(v) for k, v in collector.labels.items()})))
    while True:
        msg = conn.recv()
        if msg[0] == "exit":
            return
        _, t, kind, ev = msg
        clock.now = L.EPOCH + t
        conn.send(reporter.prefill(t, ev) if kind == "prefill" else reporter.decode(t, ev))


def _serve_outputs(conn, clock, labels, observe):
    """Says the tokenizer collector's labels, then observes each step's request outputs the parent
    sends until "exit"."""
    conn.send(("ok", dict(labels=labels)))
    while True:
        msg = conn.recv()
        if msg[0] == "exit":
            return
        _, t, outs = msg
        clock.now = L.EPOCH + t
        for o in outs:
            observe(o)
        conn.send("ok")


def scheduler_worker(conn, root, mp_dir, cfg, fake_pid):
    clock = prometheus_setup(mp_dir, fake_pid)
    mc = _load(Path(root), cfg)
    if not _new_layout(Path(root)):
        mid = _is_mid(mc)
        logs = cfg["tp_rank"] == 0 or cfg["all_schedulers"]
        if not logs and not mid:
            conn.send(("off", None))
            return
        labels = {"model_name": L.MODEL, "engine_type": "unified",
                  "tp_rank": cfg["tp_rank"], "pp_rank": 0}
        if cfg.get("dp_rank") is not None:
            labels["dp_rank"] = cfg["dp_rank"]
        c = mc.SchedulerMetricsCollector(labels=labels)
        rep = _MidReporter(mc, c, logs) if mid else _OldReporter(mc, c)
        _serve_steps(conn, clock, c, rep)
        return
    ctx = mc.SchedulerMetricsCollector.init_new(
        server_args=None, enable_priority_scheduling=cfg["priority"], enable_lora=False,
        enable_hierarchical_cache=False)
    if not ctx.current_scheduler_metrics_enabled:
        conn.send(("off", None))
        return
    c = ctx.collector
    clock.now = L.EPOCH
    c.emit_constants(max_total_num_tokens=KV_TOKENS, max_total_num_tokens_swa=None,
                     weight_memory_usage_gb=15.26, kv_cache_memory_usage_gb=4.5,
                     graph_memory_usage_gb={}, max_running_requests_under_SLO=None,
                     page_size=1, num_pages=KV_TOKENS, context_len=L.MAX_MODEL_LEN,
                     startup_available_gpu_memory_gb=60.0)
    rep = _Reporter(mc, c, cfg["priority"])
    _serve_steps(conn, clock, c, rep)


# ---------------------------------------------------------------------------------------
# tokenizer manager process
# ---------------------------------------------------------------------------------------

def tokenizer_worker(conn, root, mp_dir, cfg):
    clock = prometheus_setup(mp_dir, TOKENIZER_PID)
    mc = _load(Path(root), cfg)
    if not _new_layout(Path(root)):
        c = mc.TokenizerMetricsCollector(labels={"model_name": L.MODEL})
        # 0.5.3 / 0.5.4: the observe_* calls take the labels dict first (collect_metrics
        # passes metrics_collector.labels when the request has no custom labels)
        lab = (c.labels,) if _is_mid(mc) else ()
        def observe(o):
            if o["first"]:
                c.observe_time_to_first_token(*lab, o["ttft"])
            else:
                c.observe_inter_token_latency(*lab, o["itl"], o["new_tokens"])
            f = o["finished"]
            if f:
                c.observe_one_finished_request(*lab, f["prompt"], f["generated"],
                                               f["cached"], f["e2e"], False)
        _serve_outputs(conn, clock, c.labels, observe)
        return
    labels = mc.tokenizer_metric_labels()
    c = mc.TokenizerMetricsCollector(server_args=None, labels=labels)
    def observe(o):                           # collect_metrics, per output of the step
        lab = dict(c.labels)
        if cfg["priority"]:
            lab["priority"] = str(o["priority"])
        if o["first"]:
            c.observe_time_to_first_token(lab, o["ttft"], stream=True)
        else:
            c.observe_inter_token_latency(lab, o["itl"], o["new_tokens"])
        f = o["finished"]
        if f:
            c.observe_one_finished_request(
                lab, f["prompt"], f["generated"], f["cached"], f["e2e"], False, None,
                spec_verify_ct=o["verify_ct"], is_streaming=True,
                time_per_output_token=f["tpot"])
    _serve_outputs(conn, clock, labels, observe)


# ---------------------------------------------------------------------------------------
# driving
# ---------------------------------------------------------------------------------------

def _engine_events(steps, spec=True):
    """Per engine step: the prefill report and the decode report the scheduler makes."""
    verify = Counter()
    evs = []
    for s in steps:
        running_prios = []
        # running batch after the step (finished requests leave), waiting queue
        for r, n in s["running_by_priority"].items():
            running_prios += [r] * n
        waiting_prios = []
        for r, n in s["waiting_by_priority"].items():
            waiting_prios += [r] * n
        base = dict(running_prios=sorted(running_prios), waiting_prios=sorted(waiting_prios),
                    running_tokens=s["running_tokens"], evictable=0,
                    retracted=len(s["preempted_now"]))
        firsts = [o for o in s["outputs"] if o["first"]]
        re = s["prefix_preempted"]
        if firsts or re["requests"]:
            ev = dict(base, input=s["computed_tokens"],
                      hit=s["prefix"]["hits"] + re["hits"],
                      re_input=re["queries"] - re["hits"], re_hit=re["hits"],
                      queue_times=[round(s["t_start"] - o["req"]["arrival"], 6)
                                   for o in firsts],
                      # per-stage "prefill_waiting": since arrival for a new request, since
                      # its first scheduling for the re-prefill of a retracted one
                      prefill_waits=[round(s["t_start"] - (o["req"]["arrival"] if o["first"]
                                                           else o["req"]["scheduled_ts"]), 6)
                                     for o in s["outputs"] if o["first"] or o["preempted_event"]])
            evs.append((s, "prefill", ev))
        dec = [o for o in s["outputs"] if not o["first"] and not o["preempted_event"]]
        dec_steps = len(s["spec"]["accepts"])
        if dec_steps:
            ev = dict(base, tokens=sum(o["new_tokens"] for o in dec), bs=dec_steps,
                      correct=s["spec"]["accepted"])
            evs.append((s, "decode", ev))
        for o in s["outputs"]:
            if not o["first"]:
                verify[o["rid"]] += 1
            o["verify_ct"] = verify[o["rid"]]
    return evs


def run(root: Path, mode: str, cfg):
    steps, _ = sim.simulate(True)
    engines = cfg.get("engines", [0] if mode == "single" else [0, 1])
    tps = cfg.get("tps", [0] if mode == "single" else [0, 1])
    steps = [s for s in steps if s["engine"] in engines]
    evs = _engine_events(steps)
    ctx = mp.get_context("spawn")
    mp_dir = tempfile.mkdtemp(prefix="sglang-mp-")
    procs, conns, info = {}, {}, {}
    logged = []          # (t, engine, tp, values) of every log_stats call
    try:
        # tokenizer manager first (it starts first in launch_server), then the schedulers
        a, b = ctx.Pipe()
        p = ctx.Process(target=tokenizer_worker, args=(b, str(root), mp_dir, cfg))
        p.start()
        procs["tok"], conns["tok"] = p, a
        info["tok"] = a.recv()[1]
        for e in engines:
            for tp in tps:
                c = dict(cfg, tp_rank=tp, dp_rank=e if len(engines) > 1 else None)
                a, b = ctx.Pipe()
                p = ctx.Process(target=scheduler_worker,
                                args=(b, str(root), mp_dir, c, SCHED_PID[(e, tp)]))
                p.start()
                st, inf = a.recv()
                procs[(e, tp)] = p
                if st == "ok":
                    conns[(e, tp)] = a
                    info[(e, tp)] = inf
        from prometheus_client import CollectorRegistry, generate_latest, multiprocess

        def scrape():
            reg = CollectorRegistry()
            multiprocess.MultiProcessCollector(reg, path=mp_dir)
            return generate_latest(reg).decode()

        scrapes = []
        targets = [L.T_SCRAPE1, L.T_SCRAPE2]
        by_step = {}
        for s, kind, ev in evs:
            by_step.setdefault(id(s), []).append((kind, ev))
        for s in steps + [None]:
            while targets and (s is None or s["t_out"] > targets[0] + 1e-9):
                scrapes.append(scrape())
                targets.pop(0)
            if s is None:
                break
            for kind, ev in by_step.get(id(s), []):
                for tp in tps:
                    k = (s["engine"], tp)
                    if k not in conns:
                        continue
                    conns[k].send(("report", s["t_out"], kind, ev))
                    v = conns[k].recv()
                    if v is not None:
                        logged.append((s["t_out"], s["engine"], tp, v))
            if s["outputs"]:
                conns["tok"].send(("outputs", s["t_out"], [public(o) for o in s["outputs"]]))
                conns["tok"].recv()
        for k, cn in conns.items():
            cn.send(("exit",))
        for p in procs.values():
            p.join()
    finally:
        for p in procs.values():
            if p.is_alive():
                p.kill()
        shutil.rmtree(mp_dir, ignore_errors=True)
    return scrapes[0], scrapes[1], steps, logged, info


PROMPT_MEANING = ("all prompt tokens of a request, cached included "
                  "(sglang:prompt_tokens_total), counted once when the request "
                  "finishes; sglang:cached_tokens_total{cache_source} counts the "
                  "cached part, also at request end")
PROMPT_MEANING_MID = ("all prompt tokens of a request, cached included "
                      "(sglang:prompt_tokens_total), counted once when the request finishes "
                      "(tokenizer manager, observe_one_finished_request); "
                      "sglang:cached_tokens_total (no cache_source label) counts the cached "
                      "part, also at request end, and only when it is > 0")


def _expected(rel, mode, steps, logged, info, cfg, setup, notes, facts,
              prompt_meaning=PROMPT_MEANING):
    import expected as X
    engines = sorted({s["engine"] for s in steps})
    w = X.window(steps, engines)
    last = {}
    for t, e, tp, v in logged:
        if tp == 0 and t <= L.T_SCRAPE2 + 1e-9:
            last[e] = v

    def mean(key):
        return round(sum(last[e][key] for e in engines) / len(engines), 6)
    outs = X.outputs(w)
    fin = [o for o in outs if o["finished"]]
    ttft = [o["ttft"] for o in outs if o["first"]]
    itl = [o for o in outs if not o["first"]]
    live = Counter()
    for s in w:
        first = [o for o in s["outputs"] if o["first"]]
        re = s["prefix_preempted"]
        if first or re["requests"]:
            live["prefill_compute"] += s["computed_tokens"]
            live["prefill_cache"] += s["prefix"]["hits"] + re["hits"]
        if s["spec"]["accepts"]:
            live["decode"] += sum(o["new_tokens"] for o in s["outputs"]
                                  if not o["first"] and not o["preempted_event"])
    queue = [round(s["t_start"] - o["req"]["arrival"], 6) for s in w for o in s["outputs"]
             if o["first"]]
    return {
        "server": "sglang", "release": rel.version, "mode": mode, "setup": setup,
        "interval_s": L.INTERVAL_S,
        "gauges": {
            "requests_running": sum(last[e]["running"] for e in engines),
            "requests_waiting": sum(last[e]["waiting"] for e in engines),
            "kv_cache_usage": mean("token_usage"),
            "prefix_cache_hit_rate": mean("cache_hit_rate"),
            "spec_accept_rate": mean("spec_accept_rate") if facts["spec_rate"] else None,
            "spec_accept_length": mean("spec_accept_length"),
            "gen_throughput": round(sum(last[e]["gen_throughput"] for e in engines), 6),
        },
        "increase": {
            "prompt_tokens": sum(o["finished"]["prompt"] for o in fin),
            "prompt_tokens_cached": sum(o["finished"]["cached"] for o in fin),
            "generation_tokens": sum(o["finished"]["generated"] for o in fin),
            "steps": None, "preemptions": None,
            "prefix_cache_queries": None, "prefix_cache_hits": None,
            "spec_drafts": None, "spec_draft_tokens": None, "spec_accepted_tokens": None,
            "spec_accepted_per_position": None,
            "live_tokens": dict(sorted(live.items())) if facts["live"] else None,
        },
        "latency_count_increase": {"ttft": len(ttft),
                                   "inter_token": sum(o["new_tokens"] for o in itl),
                                   "e2e": len(fin),
                                   "queue": len(queue) if facts["queue_hist"] else None},
        "latency_sum_increase": {"ttft": round(sum(ttft), 6),
                                 "inter_token": round(sum(o["itl"] for o in itl), 6),
                                 "e2e": round(sum(o["finished"]["e2e"] for o in fin), 6),
                                 "queue": round(sum(queue), 6) if facts["queue_hist"]
                                 else None},
        "prompt_tokens_meaning": prompt_meaning,
        "counted_at_request_end": ["prompt_tokens", "prompt_tokens_cached",
                                   "generation_tokens"],
        "notes": "; ".join(notes),
    }


SIZE_NOTE = ("dp 2 is not in these fixtures: with dp_rank labels the scrape passes 100 KB "
             "(dp 2 x tp 2 with all schedulers 141 KB, dp 2 with rank-0 metrics only 107 KB, "
             "tp 2 + priority 120 KB), because the release pre-creates ~30 KB of labeled series "
             "per scheduler rank")


OLD_SUPPORTED = {"0.4.10.post2"}
MID_SUPPORTED = {"0.5.3", "0.5.4"}     # sglang/srt/metrics/collector.py with queue_time


def _line_of(root, rel, needle, nth=1):
    """`file:line` of the nth line of a release file that contains needle (SOURCES.md)."""
    hits = [i for i, line in enumerate((Path(root) / rel).read_text().splitlines(), 1)
            if needle in line]
    if len(hits) < nth:
        raise RuntimeError(f"{rel}: {needle!r} not found")
    return f"`{rel}:{hits[nth - 1]}`"


def _mid_call_sites(root, rate):
    sch = "sglang/srt/managers/scheduler.py"
    mix = "sglang/srt/managers/scheduler_metrics_mixin.py"
    tok = "sglang/srt/managers/tokenizer_manager.py"
    col = "sglang/srt/metrics/collector.py"
    out = [
        "Call sites (read from the release's files, driven as described):",
        "",
        f"- `sglang:queue_time_seconds`: observed by each scheduler process (every tp rank "
        f"with --enable-metrics, not only the rank that logs stats) in get_new_batch_prefill, "
        f"{_line_of(root, sch, 'self.metrics_collector.observe_queue_time(')}, once per "
        f"request (`forward_entry_time == 0`), value `forward_entry_time - "
        f"wait_queue_entry_time` ({_line_of(root, col, 'def get_queueing_time')}); labels = "
        f"the scheduler labels (model_name, engine_type, tp_rank, pp_rank, dp_rank when dp > 1).",
        f"- `sglang:per_stage_req_latency_seconds{{stage}}`: unified mode only "
        f"`stage=\"prefill_waiting\"`, {_line_of(root, sch, 'req.add_latency(RequestStage.PREFILL_WAITING)')}, "
        f"every request of every new prefill batch (a retracted request again at its re-prefill).",
        f"- request-end counters: `observe_one_finished_request` "
        f"({_line_of(root, col, 'def observe_one_finished_request')}), called from "
        f"tokenizer_manager collect_metrics when `state.finished` "
        f"({_line_of(root, tok, 'self.metrics_collector.observe_one_finished_request(')}): "
        f"prompt_tokens_total, generation_tokens_total, cached_tokens_total (only if > 0), "
        f"num_requests_total, num_so_requests_total, e2e_request_latency_seconds.",
        f"- `sglang:spec_accept_length`: {_line_of(root, mix, 'self.spec_num_total_accepted_tokens / self.spec_num_total_forward_ct')} "
        f"= (accepted drafts + bs) / bs over the last 40 decode steps "
        f"({_line_of(root, mix, 'self.spec_num_total_accepted_tokens += num_accepted_tokens + bs')}).",
    ]
    if rate:
        out.append(f"- `sglang:spec_accept_rate`: "
                   f"{_line_of(root, mix, 'self.spec_num_total_accepted_tokens / total_draft_tokens')} "
                   f"= (accepted drafts + bs) / (bs * (speculative_num_steps + 1)), i.e. "
                   f"spec_accept_length / (steps + 1): the bonus token is counted as accepted.")
    else:
        out.append("- no `sglang:spec_accept_rate` in this release.")
    out.append("- no `sglang:realtime_tokens_total` in this release.")
    return out + [""]


def generate(rel, write_fixture):
    import pypi_files
    import sources
    root = pypi_files.extract(rel, SOURCE_PREFIXES)
    new = _new_layout(root)
    mid = rel.version in MID_SUPPORTED
    if not new and rel.version not in OLD_SUPPORTED | MID_SUPPORTED:
        raise NotImplementedError(f"{rel.key}: SGLang driver not adapted to this release yet")
    files = ["sglang/srt/observability/metrics_collector.py"] if new else \
        ["sglang/srt/metrics/collector.py"]
    defs = sources.definitions(root, files, "sglang:")
    facts = dict(spec_rate="sglang:spec_accept_rate" in defs,
                 live="sglang:realtime_tokens_total" in defs,
                 queue_hist="sglang:queue_time_seconds" in defs)
    if new:
        route = ("(`sglang/srt/observability/metrics_collector.py` SchedulerMetricsCollector "
                 "(built by its `init_new`) driven with its `SchedulerStats` / `QueueCount`, and "
                 "TokenizerMetricsCollector with labels from its `tokenizer_metric_labels()`); "
                 "the calls and their moments follow "
                 "`managers/scheduler_components/metrics_reporter.py` (report_prefill_stats, "
                 "report_decode_stats every decode_log_interval=40 decode steps), "
                 "`batch_result_processor.py` and `managers/tokenizer_manager.py` collect_metrics.")
    else:
        route = ("(`sglang/srt/metrics/collector.py` SchedulerMetricsCollector with the labels "
                 "dict of `managers/scheduler_metrics_mixin.py` init_metrics, driven with its "
                 "`SchedulerStats` as `log_prefill_stats` / `log_decode_stats` fill it (decode "
                 "report every decode_log_interval=40 decode steps, "
                 "`scheduler_output_processor_mixin.py`; spec counters as `scheduler.py` "
                 "accumulates them), and TokenizerMetricsCollector with labels "
                 "{model_name} as `managers/tokenizer_manager.py` builds it, called as its "
                 "collect_metrics does).")
        if mid:
            route = route[:-2] + (" with the labels dict first; `scheduler.py` "
                                  "get_new_batch_prefill's observe_queue_time and "
                                  "add_latency(PREFILL_WAITING) per request of each new "
                                  "prefill batch).")
    lines = [f"### SGLang {rel.version}", "",
             f"PyPI file `{rel.filename}` (sha256 `{rel.sha256}`). Route: real module " + route,
             ""]
    if mid:
        lines += _mid_call_sites(root, facts["spec_rate"])
    for mode in ("single", "multi"):
        notes = []
        if mode == "single":
            cfg = dict(priority=new, all_schedulers=False, engines=[0], tps=[0])
            setup = ("1 scheduler (tp 1, dp 1) + tokenizer manager, separate processes, "
                     "PROMETHEUS_MULTIPROC_DIR, "
                     + ("--enable-priority-scheduling (requests carry priority 0 or 1), "
                        if new else "")
                     + "EAGLE spec decode 3 steps (4 draft tokens), "
                     "streaming requests; the load of engine 0 of load.py")
        elif new:
            cfg = dict(priority=False, all_schedulers=True, engines=[0], tps=[0, 1])
            setup = ("tp 2 (dp 1): 2 scheduler processes, both writing metrics "
                     "(--enable-metrics-for-all-schedulers) + tokenizer manager, "
                     "PROMETHEUS_MULTIPROC_DIR, EAGLE spec decode 3 steps, streaming "
                     "requests; the load of engine 0 of load.py")
        else:
            cfg = dict(priority=False, all_schedulers=True, engines=[0, 1], tps=[0, 1])
            setup = ("dp 2 x tp 2: 4 scheduler processes, all writing metrics "
                     "(--enable-metrics-for-all-schedulers) + tokenizer manager, "
                     "PROMETHEUS_MULTIPROC_DIR, EAGLE spec decode 3 steps, streaming "
                     "requests; engines 0 and 1 of load.py = dp_rank 0 and 1")
        s1, s2, steps, logged, info = run(root, mode, cfg)
        if mode == "multi":
            notes.append("every scheduler metric appears once per tp_rank (tp_rank=\"0\" and "
                         "\"1\" carry identical values, both ranks see the same batches): count "
                         "tp_rank=\"0\" only; tokenizer metrics have no tp_rank")
            if new:
                notes.append(SIZE_NOTE)
            else:
                notes.append("dp_rank=\"0\"/\"1\" are the two engines: sum running/waiting/"
                             "gen_throughput, mean token_usage/cache_hit_rate/spec_accept_length"
                             + ("/spec_accept_rate" if facts["spec_rate"] else ""))
                if mid:
                    notes.append("the scripted preemption of request 33 (dp_rank 1) is a "
                                 "retraction and re-prefill: sglang:num_retracted_reqs is 1 in "
                                 "the first log_stats after it, 0 after that; the re-prefill is "
                                 "part of that prefill batch's cache_hit_rate and adds one "
                                 "per_stage_req_latency_seconds{stage=\"prefill_waiting\"} "
                                 "observation but no queue_time_seconds one")
                else:
                    notes.append("the scripted preemption of request 33 (dp_rank 1) is a "
                                 "retraction and re-prefill; its re-prefill is part of that "
                                 "prefill batch's cache_hit_rate; sglang:total_retracted_reqs "
                                 "is not driven")
        elif new:
            notes.append("with priority scheduling the queue gauges (num_running_reqs, "
                         "num_queue_reqs and the PD queue gauges) carry the total under "
                         "priority=\"\" and a per-priority breakdown under priority=\"0\", "
                         "\"1\" (a priority once seen stays exported, at 0 when empty); every "
                         "other scheduler metric only has priority=\"\"; tokenizer metrics "
                         "(token counters, latency histograms) carry the request's priority, "
                         "so sum over priority there")
        if mid:
            notes.append("sglang:cache_hit_rate is the hit rate of the last prefill batch, and "
                         "log_decode_stats sets it to 0.0 every 40th decode step")
            notes.append("sglang:queue_time_seconds: one observation per request when it is "
                         "first scheduled into a prefill batch (forward_entry_time - "
                         "wait_queue_entry_time), by the scheduler process; "
                         "sglang:per_stage_req_latency_seconds{stage=\"prefill_waiting\"} also "
                         "(every request of each new prefill batch)")
            notes.append("sglang:spec_accept_rate = spec_accept_length / (speculative_num_steps "
                         "+ 1) over the last 40 decode steps (accepted drafts + 1 bonus token "
                         "per step, divided by 4)" if facts["spec_rate"] else
                         "no sglang:spec_accept_rate in this release (spec_accept_length only)")
            notes.append("no realtime_tokens_total; sglang:token_usage is not rounded")
        elif not new:
            notes.append("sglang:cache_hit_rate is the hit rate of the last prefill batch, and "
                         "log_decode_stats sets it to 0.0 every 40th decode step; "
                         "sglang:avg_request_queue_latency is a gauge (mean queue time of the "
                         "last prefill batch's new requests), no queue histogram; no "
                         "spec_accept_rate, no realtime_tokens_total")
        notes.append("gauges are the values of the last log_stats call of each engine before "
                     "scrape 2 (prefill batch report, or every 40th decode step)")
        if facts["live"]:
            notes.append("sglang:realtime_tokens_total{mode}: prefill_compute (uncached input incl. "
                     "re-prefill of a retracted request) and prefill_cache (radix hits) per "
                         "prefill batch, decode (tokens incl. accepted drafts) every decode "
                         "step")
        notes.append("inter_token_latency_seconds: one observation per generated token "
                     "(observe_inter_token_latency adds num_new_tokens to one bucket, the "
                     "chunk interval to _sum)")
        notes.append("request-end counters lag: requests still running or waiting at scrape 2 "
                     "are not in prompt/generation/cached token increases")
        exp = _expected(rel, mode, steps, logged, info, cfg, setup, notes, facts,
                        **(dict(prompt_meaning=PROMPT_MEANING_MID) if mid else {}))
        name = f"sglang-{rel.version}-{mode}"
        write_fixture(name, s1, s2, exp)
        lines.append(f"- `{name}`: {setup}.")
    lines += ["", "| metric | defined at | type | labels | multiprocess_mode |",
              "| --- | --- | --- | --- | --- |"]
    out = Path(__file__).resolve().parent.parent.parent / "tests/fixtures/metrics/releases"
    seen = set()
    for mode in ("single", "multi"):
        text = (out / f"sglang-{rel.version}-{mode}/scrape2.txt").read_text()
        for fam in sources.family_names(text):
            b = sources.base_name(fam, defs)
            key = b or fam
            if key in seen:
                continue
            seen.add(key)
            if b is None:
                lines.append(f"| `{fam}` | (not found by name) | | | |")
                continue
            d = defs[b]
            lines.append(f"| `{b}` | `{d['file']}:{d['line']}` | {d['kind']} | "
                         f"`{d['labels']}` | {d['mode']} |")
    return "\n".join(lines) + "\n"
