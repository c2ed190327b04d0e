"""Drive a vLLM release's own V1 metrics code (vllm/v1/metrics/loggers.py
PrometheusStatLogger, vllm/v1/metrics/stats.py, vllm/v1/spec_decode/metrics.py) with the
scripted load, in real API-server-like processes, and scrape it the way the release's
/metrics does (REGISTRY, or a MultiProcessCollector over PROMETHEUS_MULTIPROC_DIR)."""

import dataclasses
import inspect
import logging
import multiprocessing as mp
import os
import shutil
import sys
import tempfile
from pathlib import Path

import load as L
import sim
from child_process import Cfg, prometheus_setup, public

SOURCE_PREFIXES = ["vllm/v1/metrics/", "vllm/v1/spec_decode/metrics.py",
                   "vllm/v1/engine/__init__.py", "vllm/envs.py", "vllm/config",
                   "vllm/v1/core/kv_cache_manager.py", "vllm/v1/core/sched/scheduler.py",
                   "vllm/v1/engine/async_llm.py", "vllm/v1/engine/output_processor.py",
                   "vllm/entrypoints/openai/api_server.py"]
REAL = ["vllm.v1.metrics.loggers", "vllm.v1.metrics.stats", "vllm.v1.metrics.prometheus",
        "vllm.v1.spec_decode.metrics", "vllm.v1.metrics.utils", "vllm.v1.metrics.buckets",
        "vllm.v1.metrics.cache_hit_source"]
FAKE_PIDS = {0: 101, 1: 102}   # API server index -> process identifier given to prometheus_client


class _CacheConfig(Cfg):
    def metrics_info(self):           # vLLM: {key: str(value) for key, value in __dict__}
        return {k: str(v) for k, v in self.__dict__.items()}


def _cache_config_fields(root: Path):
    import stubs
    for f in (root / "vllm/config/cache.py", root / "vllm/config.py",
              root / "vllm/config/__init__.py"):
        if f.exists():
            d = stubs.literal_defaults(f, class_name="CacheConfig")
            if d:
                return d
    return {}


def make_config(root: Path, spec: bool):
    fields = _cache_config_fields(root)
    fields.update(block_size=L.BLOCK_SIZE, gpu_memory_utilization=0.9,
                  enable_prefix_caching=True, num_gpu_blocks=L.NUM_GPU_BLOCKS,
                  num_cpu_blocks=0, cache_dtype="auto")
    fields = {k: v for k, v in fields.items() if k in _cache_config_fields(root) or
              k in ("num_gpu_blocks", "num_cpu_blocks")}
    return Cfg(
        model_config=Cfg(served_model_name=L.MODEL, max_model_len=L.MAX_MODEL_LEN),
        observability_config=Cfg(show_hidden_metrics=False, kv_cache_metrics=False),
        speculative_config=Cfg(num_speculative_tokens=L.NUM_SPEC_TOKENS, method="eagle3")
        if spec else None,
        cache_config=_CacheConfig(**dict(sorted(fields.items()))),
        parallel_config=Cfg(data_parallel_size=2),
    )


def _load_modules(root: Path):
    import stubs
    extra = {
        "vllm.logger": {"init_logger": logging.getLogger},
        "vllm.envs": stubs.literal_defaults(root / "vllm/envs.py", type_checking=True),
        "vllm.v1.engine": stubs.class_from_source(
            root / "vllm/v1/engine/__init__.py", ["FINISH_REASON_STRINGS", "FinishReason"]),
    }
    real = [m for m in REAL if (root / (m.replace(".", "/") + ".py")).exists()]
    stubs.install(root, "vllm", real, extra)
    import importlib
    return {m.rsplit(".", 1)[1] if "spec_decode" not in m else "spec":
            importlib.import_module(m) for m in real}


def worker(conn, root, mp_dir, spec, engines, fake_pid):
    """One vLLM API server process: its PrometheusStatLogger(s), fed what the engines
    route to this process."""
    clock = prometheus_setup(mp_dir, fake_pid)
    from prometheus_client import REGISTRY, CollectorRegistry, generate_latest, multiprocess
    root = Path(root)
    mods = _load_modules(root)
    lg, st, spec_mod = mods["loggers"], mods["stats"], mods["spec"]
    cfg = make_config(root, spec)
    P = lg.PrometheusStatLogger
    per_engine = "engine_index" in inspect.signature(P.__init__).parameters
    try:
        if per_engine:   # 0.9.x: one logger per engine (setup_default_loggers)
            loggers = {e: P(cfg, e) for e in engines}
            loggers[engines[0]].log_engine_initialized()
        else:
            logger = P(cfg, engine_indexes=list(engines))
            logger.log_engine_initialized()
    except NotImplementedError as e:
        conn.send(("refused", str(e)))
        return
    conn.send(("ok", os.getpid()))
    FR = sys.modules["vllm.v1.engine"].FinishReason
    while True:
        msg = conn.recv()
        if msg[0] == "exit":
            return
        if msg[0] == "scrape":
            if mp_dir:
                registry = CollectorRegistry()
                multiprocess.MultiProcessCollector(registry)
            else:
                registry = REGISTRY
            conn.send(generate_latest(registry).decode())
            continue
        _, t, engine, sched, outs = msg
        clock.now = L.EPOCH + t
        s = _scheduler_stats(st, spec_mod, sched) if sched is not None else None
        it = _iteration_stats(st, FR, outs, t) if outs else None
        if per_engine:
            loggers[engine].record(scheduler_stats=s, iteration_stats=it)
        else:
            logger.record(scheduler_stats=s, iteration_stats=it, engine_idx=engine)
        conn.send("ok")


def _set(obj, **kw):
    for k, v in kw.items():
        if hasattr(obj, k):
            setattr(obj, k, v)


def _scheduler_stats(st, spec_mod, s):
    pcs = st.PrefixCacheStats()
    new, pre = s["prefix"], s["prefix_preempted"]
    if hasattr(pcs, "preempted_queries"):   # 0.12+: preempted requests counted apart
        pcs.requests, pcs.queries, pcs.hits = new["requests"], new["queries"], new["hits"]
        pcs.preempted_requests = pre["requests"]
        pcs.preempted_queries, pcs.preempted_hits = pre["queries"], pre["hits"]
    else:
        pcs.requests = new["requests"] + pre["requests"]
        pcs.queries = new["queries"] + pre["queries"]
        pcs.hits = new["hits"] + pre["hits"]
    sds = None
    if s["spec"]["accepts"]:
        sds = spec_mod.SpecDecodingStats.new(L.NUM_SPEC_TOKENS)
        for a in s["spec"]["accepts"]:
            sds.observe_draft(num_draft_tokens=L.NUM_SPEC_TOKENS, num_accepted_tokens=a)
    names = {f.name for f in dataclasses.fields(st.SchedulerStats)}
    kw = dict(num_running_reqs=s["num_running"], num_waiting_reqs=s["num_waiting"],
              prefix_cache_stats=pcs, spec_decoding_stats=sds)
    kw["kv_cache_usage" if "kv_cache_usage" in names else "gpu_cache_usage"] = s["kv_usage"]
    return st.SchedulerStats(**{k: v for k, v in kw.items() if k in names})


def _iteration_stats(st, FR, outs, t):
    it = st.IterationStats()
    it.iteration_timestamp = L.EPOCH + t
    itl = it.inter_token_latencies_iter if hasattr(it, "inter_token_latencies_iter") \
        else it.time_per_output_tokens_iter
    pts = getattr(it, "prompt_token_stats", None)
    fields = {f.name for f in dataclasses.fields(st.FinishedRequestStats)}
    for o in outs:
        it.num_generation_tokens += o["new_tokens"]
        if o["first"]:
            if pts is not None:     # 0.34: prompt tokens by source
                pts.computed += o["prompt"] - o["cached"]
                pts.local_cache_hit += o["cached"]
                pts.cached_tokens += o["cached"]
                pts.total += o["prompt"]
            else:
                it.num_prompt_tokens += o["prompt"]
            it.time_to_first_tokens_iter.append(o["ttft"])
        else:
            itl.append(o["itl"])
        if o["preempted_event"]:
            it.num_preempted_reqs += 1
        f = o["finished"]
        if f:
            kw = dict(finish_reason=FR.LENGTH if f["reason"] == "length" else FR.STOP,
                      request_id=f"req-{o['rid']}", e2e_latency=f["e2e"],
                      num_prompt_tokens=f["prompt"], num_generation_tokens=f["generated"],
                      max_tokens_param=f["max_tokens"], queued_time=f["queued"],
                      prefill_time=f["prefill"], inference_time=f["inference"],
                      decode_time=f["decode"], mean_time_per_output_token=f["tpot"],
                      is_corrupted=False, num_preemptions=f["preemptions"],
                      num_cached_tokens=f["cached"])
            it.finished_requests.append(
                st.FinishedRequestStats(**{k: v for k, v in kw.items() if k in fields}))
    return it


def run(root: Path, mode: str, spec: bool):
    """Returns (scrape1, scrape2, steps, routing) or None when the release refuses spec."""
    steps, _ = sim.simulate(spec)
    clients = [0] if mode == "single" else [0, 1]
    ctx = mp.get_context("spawn")
    mp_dir = tempfile.mkdtemp(prefix="vllm-mp-") if mode == "multi" else None
    procs, conns, pids = {}, {}, {}
    try:
        for c in clients:
            a, b = ctx.Pipe()
            p = ctx.Process(target=worker, args=(b, str(root), mp_dir, spec, [0, 1],
                                                     FAKE_PIDS[c]))
            p.start()
            procs[c], conns[c] = p, a
            status, info = a.recv()
            if status == "refused":
                return None, info
            pids[c] = info
        scrapes, routing = [], []
        targets = [L.T_SCRAPE1, L.T_SCRAPE2]
        for s in steps + [None]:
            while targets and (s is None or s["t_out"] > targets[0] + 1e-9):
                conns[0].send(("scrape",))
                scrapes.append(conns[0].recv())
                targets.pop(0)
            if s is None:
                break
            sched_client = 0 if mode == "single" else (
                s["client_order"][0] if s["client_order"] else 0)
            order = list(dict.fromkeys(
                ([sched_client] if mode == "multi" else []) + s["client_order"]))
            for c in (clients if mode == "single" else order):
                outs = [public(o) for o in s["outputs"]
                        if mode == "single" or o["client"] == c]
                sched = {k: v for k, v in s.items() if k != "outputs"} \
                    if c == sched_client else None
                if not outs and sched is None:
                    continue
                conns[c].send(("record", s["t_out"], s["engine"], sched, outs))
                conns[c].recv()
                routing.append(dict(t=s["t_out"], engine=s["engine"], client=c,
                                    sched=sched is not None, outputs=len(outs)))
        for c in clients:
            conns[c].send(("exit",))
            procs[c].join()
    finally:
        for p in procs.values():
            if p.is_alive():
                p.kill()
        if mp_dir:
            shutil.rmtree(mp_dir, ignore_errors=True)
    return (scrapes[0], scrapes[1], steps, routing), None


def _release_facts(root: Path, defs):
    stats_src = (root / "vllm/v1/metrics/stats.py").read_text()
    kv = defs.get("vllm:kv_cache_usage_perc", {})
    return dict(
        kv_default_all=kv.get("mode") == "(default 'all')",
        preempted_separate="preempted_queries" in stats_src,
        prompt_cached="vllm:prompt_tokens_cached" in defs,
        per_engine_logger="engine_index: int" in
        (root / "vllm/v1/metrics/loggers.py").read_text().split("class PrometheusStatLogger")[1]
        .split("def ")[1],
    )


SOURCE_FILES = ["vllm/v1/metrics/loggers.py", "vllm/v1/spec_decode/metrics.py",
                "vllm/v1/metrics/stats.py"]


def generate(rel, write_fixture):
    import expected as X
    import pypi_files
    import sources
    root = pypi_files.extract(rel, SOURCE_PREFIXES)
    defs = sources.definitions(root, SOURCE_FILES, "vllm:")
    facts = _release_facts(root, defs)
    lines = [f"### vLLM {rel.version}", "",
             f"PyPI file `{rel.filename}` (sha256 `{rel.sha256}`). Route: real module "
             f"(`vllm/v1/metrics/loggers.py` PrometheusStatLogger driven with "
             f"`vllm/v1/metrics/stats.py` SchedulerStats/IterationStats/FinishedRequestStats "
             f"and `vllm/v1/spec_decode/metrics.py` SpecDecodingStats).", ""]
    for mode in ("single", "multi"):
        notes = []
        res, err = run(root, mode, True)
        spec = True
        if res is None:
            spec = False
            notes.append(f"speculative decoding off: this release's PrometheusStatLogger "
                         f"raises NotImplementedError({err!r}) with 2 engines per API server, "
                         f"so the server cannot run the spec-decode load with DP 2")
            res, err = run(root, mode, False)
        s1, s2, steps, routing = res
        engines = [0, 1]
        if mode == "single" and facts["per_engine_logger"]:
            engines = [1]
            notes.append("one PrometheusStatLogger per engine, each constructor calls "
                         "unregister_vllm_metrics(): engine 0's collectors are unregistered "
                         "from REGISTRY when engine 1's logger is built, so only engine \"1\" "
                         "is exported (vllm:cache_config_info, created later by engine 0's "
                         "logger, shows engine \"0\"); expected.json covers engine 1 only")
        if mode == "multi":
            notes.append("scheduler stats of each engine step go to one API server only (the "
                         "first client with outputs in that step, else client 0); each "
                         "API server records iteration stats for its own requests; counters "
                         "and histograms are summed over pids by MultiProcessCollector")
            notes.append("steps = vllm:iteration_tokens_total _count increase: one observation "
                         "per API server that received outputs of an engine step, so an engine "
                         "step whose outputs went to both API servers counts twice; engine steps "
                         f"in the interval: {len(X.window(steps, engines))}")
        else:
            notes.append(f"steps = engine steps with outputs (vllm:iteration_tokens_total "
                         f"_count); engine steps in the interval: {len(X.window(steps, engines))}")
        if not facts["preempted_separate"]:
            notes.append("prefix cache counters include the preempted request's re-lookup")
        else:
            notes.append("the preempted request's re-lookup is kept apart (PrefixCacheStats."
                         "preempted_*) and not added to vllm:prefix_cache_*")
        setup = ("2 data-parallel engines, 1 API server process (no PROMETHEUS_MULTIPROC_DIR)"
                 if mode == "single" else
                 "2 data-parallel engines, 2 API server processes (PROMETHEUS_MULTIPROC_DIR)")
        setup += ", spec decode 3 draft tokens" if spec else ", no spec decode"
        exp = X.vllm(rel.version, mode, steps, routing, spec, engines,
                     per_pid_kv=facts["kv_default_all"] and mode == "multi",
                     preempted_separate=facts["preempted_separate"],
                     prompt_cached_published=facts["prompt_cached"], setup=setup,
                     notes=notes)
        if facts["prompt_cached"]:
            exp["prompt_tokens_meaning"] += ("; vllm:prompt_tokens_cached counts the prefix-"
                                             "cache-hit part, also at the first token")
        name = f"vllm-{rel.version}-{mode}"
        write_fixture(name, s1, s2, exp)
        lines.append(f"- `{name}`: {setup}.")
    lines += ["", "In these files `labelnames` is `[\"model_name\", \"engine\"]` (model_name = "
              "served_model_name, engine = the data-parallel engine index); "
              "`pos_labelnames` adds `\"position\"`. A gauge whose mode reads (default 'all') "
              "has no multiprocess_mode argument: with PROMETHEUS_MULTIPROC_DIR prometheus_client "
              "writes one sample per process with a `pid` label.",
              "", "| metric | defined at | type | labels | multiprocess_mode |",
              "| --- | --- | --- | --- | --- |"]
    seen = set()
    text = (Path(__file__).resolve().parent.parent.parent /
            f"tests/fixtures/metrics/releases/vllm-{rel.version}-multi/scrape2.txt").read_text()
    text1 = (Path(__file__).resolve().parent.parent.parent /
             f"tests/fixtures/metrics/releases/vllm-{rel.version}-single/scrape2.txt").read_text()
    for fam in sources.family_names(text1) + sources.family_names(text):
        b = sources.base_name(fam, defs)
        if b is None or b in seen:
            if b is None and fam not in seen:
                seen.add(fam)
                lines.append(f"| `{fam}` | (not found by name) | | | |")
            continue
        seen.add(b)
        d = defs[b]
        lines.append(f"| `{b}` | `{d['file']}:{d['line']}` | {d['kind']} | "
                     f"`{d['labels']}` | {d['mode']} |")
    return "\n".join(lines) + "\n"
