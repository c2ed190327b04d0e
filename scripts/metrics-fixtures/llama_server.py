#!/usr/bin/env python3
"""/metrics fixtures from a real llama-server run (llama.cpp as vendored in llama-cpp-python 0.3.36).

Writes tests/fixtures/metrics/releases/llama-server-0.3.36-<mode>/{scrape1.txt,scrape2.txt,expected.json}
for mode `single` (two slots, no draft model) and mode `spec` (the same with the demo model as its own
draft model, `-md ... --spec-type draft-simple`). The server is the one scripts/llama-cpp.sh prints
(built from the PyPI sdist, not rebuilt here). Standard library only.

expected.json is computed from what the scripted requests told us: every request streams from the
native /completion endpoint with "timings_per_token": true, so each chunk carries the slot's own
counters (prompt_n, cache_n, predicted_n, predicted_ms, draft_n, draft_n_accepted; JSON written by
server_slot_stats::to_json, tools/server/server-common.cpp:84-105), and from the requests' states at
scrape2 (which had streamed tokens and not finished, which were queued behind two busy slots). The
/metrics text is never read back into expected.json; after writing, the script only reports whether the
scrapes' differences agree with it.

What the llama.cpp code says (paths under vendor/llama.cpp/ of llama_cpp_python-0.3.36.tar.gz,
sha256 832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e):

- /metrics is rendered by server_task_result_metrics::to_metrics(), tools/server/server-task.cpp:1523-1617:
  prefix `llamacpp:`, no labels except `position` on the per-position counter. Counters (1524-1565):
  prompt_tokens_total ("excluding cached tokens", 1526), prompt_tokens_cached_total (1530),
  prompt_seconds_total, tokens_predicted_total (1538), tokens_predicted_seconds_total, n_decode_total
  (1546, "excluding speculative decoding and multimodal decoding"), n_tokens_max, and
  spec_decode_num_draft_tokens_total / _accepted_tokens_total / _drafts_total (1554-1565). Gauges
  (1567-1590): prompt_tokens_seconds, predicted_tokens_seconds (1574), requests_processing (1578),
  requests_deferred (1582), n_busy_slots_per_decode. No KV-cache usage, no latency histograms, no
  preemption or prefix-cache query/hit counters.
- Values are written with `<< item.value` where value is a double (server-task.cpp:1598, server-task.h:505):
  default ostream formatting, 6 significant digits. Counts print as integers only up to 999999; a count
  of 1234567 would print as `1.23457e+06`. Seconds print as `0.064555`.
- The three spec_decode_* counters are in the fixed counter list, so they are exported (at 0) even
  without a draft model; the labeled spec_decode_num_accepted_tokens_per_pos_total{position="i"} is
  written only when the per-position vector is non-empty (server-task.cpp:1606), i.e. after the first
  finished speculative request; it has common_speculative_n_max() positions (server-context.cpp:3964-3967),
  here --spec-draft-n-max 3.
- Counted at REQUEST END: tokens_predicted_total, tokens_predicted_seconds_total, the spec_decode_*
  counters and the per-position counter (and the predicted_tokens_seconds bucket). They are added only by
  metrics_on_prediction() (server-context.cpp:4110-4131), called only from the slot's callback_on_reset
  (server-context.cpp:1287-1292), which server_slot::release() runs when the request stops
  (server-context.cpp:514-535, callback at 529); the slot's own stats (n_gen, n_draft_tokens,
  n_draft_accepted, n_draft_verif_steps: server-context.cpp:3034, 3847, 3961-3962, 3990) are what it adds.
  A request still generating at a scrape has contributed none of its generated tokens.
- NOT at request end: prompt_tokens_total / prompt_seconds_total are added per llama_decode batch:
  metrics_post_decode() (server-context.cpp:4052-4098) counts the batch's prompt tokens and
  metrics_flush_prompt() (4043-4049, metrics.add_prompt at 4047) adds them once a batch with an output is
  synchronized (or when all slots go idle, metrics_flush_idle 4101-4108, called at 2802). So a request
  still running at scrape2 has its processed prompt tokens counted. The bucket (server-common.h:461-520)
  says it: `bucket prompt; // only processed tokens, cached ones are counted separately below` (487).
- prompt_tokens_cached_total is added at request START, when the slot is launched and its prompt matched
  against the cache: metrics.add_prompt_cached(n_past) (server-context.cpp:3393). When the whole prompt
  is cached, one token is still evaluated (n_past-- at 3384-3388, [TAG_PROMPT_LOGITS]): a repeated prompt
  of n tokens gives cache_n = n-1, prompt_n = 1.
- n_decode_total: metrics.n_decode++ once per target llama_decode in metrics_post_decode
  (server-context.cpp:4053); one call can carry several slots' tokens, so it cannot be told from the
  responses when requests overlap.
- requests_processing = slots whose state is not idle, requests_deferred = tasks waiting for a free slot
  (queue_tasks_deferred_size()), both taken when the METRICS task runs (server-context.cpp:2482-2503); the
  /metrics handler posts that task at high priority and the bucket gauges are reset at each scrape
  (server-context.cpp:4648-4708).
- predicted_tokens_seconds = predict_bucket.steps / time (server-common.h:471-473): over the requests that
  FINISHED since the previous scrape, (sum of (n_gen - 1)) / (sum of t_gen_us) * 1e6, where n_gen - 1 is
  n_gen_steps() (server-common.h:430-432: the first token comes from the prompt batch). A per-request
  time average, not the server's wall-clock throughput.
- The per-request timings JSON has draft_n and draft_n_accepted only when draft_n > 0
  (server-common.cpp:99-102); it has no verification-step count. Steps and per-position acceptance are
  recovered here from the per-token chunks: draft_n grows once per verification step (by the draft's size,
  server-context.cpp:3034) before that step's a+1 tokens are streamed with the updated draft_n_accepted
  (3961-3962, then the token loop 3981-3998); the script checks that every complete group streamed exactly
  a+1 tokens and sets the spec step values to null if any group disagrees.

Run: python3 scripts/metrics-fixtures/llama_server.py   (about a minute; starts two servers in turn)
"""

from __future__ import annotations

import http.client
import json
import math
import os
import pathlib
import re
import socket
import subprocess
import sys
import threading
import time

RELEASE = "0.3.36"
SERVER = "llama-server"
REPO = pathlib.Path(__file__).resolve().parents[2]
MODEL = REPO / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_RELEASES_DIR = REPO / "tests" / "fixtures" / "metrics" / "releases"
SPEC_DRAFT_N_MAX = 3
N_SLOTS = 2
INTERVAL_TARGET_S = 5.0
LOG_DIR = pathlib.Path(os.environ.get("INFERSCOPE_CACHE", pathlib.Path.home() / ".cache" / "inferscope")) \
    / "metrics-fixtures" / "logs"

# Short prompts, tens of tokens (the machine may have two cores).
WARMUP = [
    ("Write one sentence about the sea.", 16),
    ("List three colors:", 16),
]
PROMPT_LONG1 = "Tell a long story about a lighthouse keeper and his cat."
PROMPT_FINISH = "Explain why the sky is blue in two sentences."
PROMPT_LONG2 = "Describe a walk through a busy market in the morning."
PROMPT_DEFERRED = "Name a fruit that is yellow."
LONG_N_PREDICT = 1500


# --------------------------------------------------------------------------------------------------
# server process


def llama_server_binary() -> pathlib.Path:
    out = subprocess.run([str(REPO / "scripts" / "llama-cpp.sh")], check=True, capture_output=True, text=True)
    prefix = pathlib.Path(out.stdout.strip().splitlines()[-1])
    binary = prefix / "bin" / "llama-server"
    if not binary.is_file():
        raise RuntimeError(f"no llama-server in {prefix}")
    return binary


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """llama-server in a child process; always killed on exit from the with-block."""

    def __init__(self, mode: str):
        self.mode = mode
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        LOG_DIR.mkdir(parents=True, exist_ok=True)
        self.log_path = LOG_DIR / f"llama-server-{RELEASE}-{mode}.log"
        self.args = [
            str(llama_server_binary()), "-m", str(MODEL), "--metrics", "-np", str(N_SLOTS), "-c", "8192",
            "-t", "2", "-tb", "2", "--host", "127.0.0.1", "--port", str(self.port), "--no-webui",
        ]
        if mode == "spec":
            self.args += ["-md", str(MODEL), "--spec-type", "draft-simple",
                          "--spec-draft-n-max", str(SPEC_DRAFT_N_MAX)]

    def __enter__(self) -> "Server":
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(self.args, stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            self._wait_healthy(180.0)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _wait_healthy(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama-server exited with {self.proc.returncode}, see {self.log_path}")
            try:
                status, _ = http_request(self.port, "GET", "/health", timeout=2.0)
                if status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.25)
        raise RuntimeError(f"llama-server not healthy after {timeout} s, see {self.log_path}")

    def __exit__(self, *exc) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.log.close()


# --------------------------------------------------------------------------------------------------
# HTTP


def http_request(port: int, method: str, path: str, body: dict | None = None, timeout: float = 60.0):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        data = None if body is None else json.dumps(body).encode()
        headers = {} if body is None else {"Content-Type": "application/json"}
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def scrape(port: int) -> bytes:
    status, body = http_request(port, "GET", "/metrics")
    if status != 200:
        raise RuntimeError(f"/metrics answered {status}: {body[:200]!r}")
    return body  # exactly as the server wrote it


class StreamingCompletion(threading.Thread):
    """One POST /completion with stream + timings_per_token; keeps every chunk's JSON."""

    def __init__(self, port: int, name: str, prompt: str, n_predict: int, ignore_eos: bool = True):
        super().__init__(daemon=True, name=name)
        self.port = port
        self.prompt = prompt
        self.body = {"prompt": prompt, "n_predict": n_predict, "stream": True, "timings_per_token": True,
                     "ignore_eos": ignore_eos, "temperature": 0.0, "cache_prompt": True}
        self.chunks: list[dict] = []
        self.lock = threading.Lock()
        self.first_chunk = threading.Event()
        self.done = threading.Event()  # the final (stop) chunk arrived
        self.ended = threading.Event()  # the thread is over, for whatever reason
        self.error: BaseException | None = None
        self.cancelled = False
        self.conn: http.client.HTTPConnection | None = None
        self.sent_at = None

    def run(self) -> None:
        try:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
            self.sent_at = time.monotonic()
            self.conn.request("POST", "/completion", body=json.dumps(self.body).encode(),
                              headers={"Content-Type": "application/json"})
            resp = self.conn.getresponse()
            if resp.status != 200:
                raise RuntimeError(f"{self.name}: /completion answered {resp.status}: {resp.read()[:300]!r}")
            while True:
                line = resp.readline()
                if not line:
                    break
                line = line.strip()
                if not line.startswith(b"data: "):
                    continue
                chunk = json.loads(line[6:])
                with self.lock:
                    self.chunks.append(chunk)
                self.first_chunk.set()
                if chunk.get("stop"):
                    self.done.set()
                    break
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            if not self.cancelled:
                self.error = e
        finally:
            self.ended.set()

    def snapshot(self) -> list[dict]:
        with self.lock:
            return list(self.chunks)

    def cancel(self) -> None:
        self.cancelled = True
        conn = self.conn
        if conn is not None and conn.sock is not None:
            try:
                conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            conn.close()

    def wait_done(self, timeout: float = 120.0) -> dict:
        if not self.done.wait(timeout) or self.error:
            raise RuntimeError(f"{self.name} did not finish: {self.error!r}")
        return self.snapshot()[-1]


def run_to_end(port: int, name: str, prompt: str, n_predict: int) -> StreamingCompletion:
    r = StreamingCompletion(port, name, prompt, n_predict)
    r.start()
    r.wait_done()
    r.join(10)
    return r


def wait_until(cond, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.02)


# --------------------------------------------------------------------------------------------------
# what the responses say


def timings(chunk: dict) -> dict:
    t = chunk.get("timings")
    if t is None:
        raise RuntimeError(f"chunk without timings: {chunk}")
    return t


def spec_steps(chunks: list[dict], n_max: int):
    """(verification steps, per-position accepted list) of one finished request, from its chunks.

    draft_n grows once per verification step, before that step's accepted+1 tokens are streamed
    (server-context.cpp:3034, 3961-3962, 3979-3998). Raises ValueError when the chunks do not show
    that pattern exactly (e.g. a step none of whose tokens was streamed).
    """
    groups = []  # [draft_n, accepted, predicted_n at the group's last chunk]
    for c in chunks:
        t = timings(c)
        d, a, p = t.get("draft_n", 0), t.get("draft_n_accepted", 0), t["predicted_n"]
        if groups and groups[-1][0] == d:
            if groups[-1][1] != a:
                raise ValueError("draft_n_accepted changed without a new draft")
            groups[-1][2] = p
        else:
            if groups and (d < groups[-1][0] or a < groups[-1][1]):
                raise ValueError("counters went down")
            groups.append([d, a, p])
    if groups[0][0] != 0:
        raise ValueError("the first chunk already has drafts")
    steps, per_pos = 0, [0] * n_max
    for k in range(1, len(groups)):
        dd = groups[k][0] - groups[k - 1][0]
        da = groups[k][1] - groups[k - 1][1]
        tokens = groups[k][2] - groups[k - 1][2]
        if not 0 <= da <= min(dd, n_max):
            raise ValueError(f"step {k}: {da} accepted of a {dd}-token draft")
        last = k == len(groups) - 1
        if not last and tokens != da + 1:
            raise ValueError(f"step {k}: {tokens} tokens streamed for {da} accepted draft tokens")
        if last and tokens < 1:
            raise ValueError("last step streamed no token")
        steps += 1
        for i in range(da):
            per_pos[i] += 1
    return steps, per_pos


def finished_summary(r: StreamingCompletion, mode: str) -> dict:
    chunks = r.snapshot()
    final = chunks[-1]
    if not final.get("stop"):
        raise RuntimeError(f"{r.name}: no final chunk")
    t = timings(final)
    s = {
        "name": r.name, "prompt_n": t["prompt_n"], "cache_n": t["cache_n"], "predicted_n": t["predicted_n"],
        "predicted_us": round(t["predicted_ms"] * 1000.0),
        "draft_n": t.get("draft_n", 0), "draft_n_accepted": t.get("draft_n_accepted", 0),
    }
    s["spec_steps"], s["spec_per_pos"], s["spec_error"] = None, None, None
    if mode == "spec":
        try:
            s["spec_steps"], s["spec_per_pos"] = spec_steps(chunks, SPEC_DRAFT_N_MAX)
            if sum(s["spec_per_pos"]) != s["draft_n_accepted"]:
                raise ValueError("per-position sum differs from draft_n_accepted")
        except ValueError as e:
            s["spec_error"] = f"{r.name}: {e}"
    return s


def running_summary(r: StreamingCompletion) -> dict:
    chunks = r.snapshot()
    if not chunks or r.done.is_set():
        raise RuntimeError(f"{r.name} was meant to be running at scrape2")
    t = timings(chunks[-1])
    return {"name": r.name, "prompt_n": t["prompt_n"], "cache_n": t["cache_n"], "predicted_n_so_far": t["predicted_n"]}


# --------------------------------------------------------------------------------------------------
# one mode


def run_mode(mode: str) -> tuple[bytes, bytes, dict, dict]:
    """Runs the scripted load; returns scrape1, scrape2, expected, a side record for the report."""
    with Server(mode) as srv:
        port = srv.port
        for i, (prompt, n) in enumerate(WARMUP):
            run_to_end(port, f"warmup{i + 1}", prompt, n)
        time.sleep(0.3)

        s1 = scrape(port)
        t1 = time.monotonic()
        started: list[StreamingCompletion] = []
        try:
            # L1: long, still generating at scrape2 (occupies one slot).
            l1 = StreamingCompletion(port, "long1_running", PROMPT_LONG1, LONG_N_PREDICT)
            l1.start(); started.append(l1)
            l1.first_chunk.wait(60) or _fail("long1 produced no token")
            # B: a new prompt, finishes between the scrapes (the other slot).
            b = run_to_end(port, "finish_new_prompt", PROMPT_FINISH, 24)
            started.append(b)
            # C: B's prompt again, finishes; the idle slot still holds it, so all but one token are cached.
            c = run_to_end(port, "finish_repeated_prompt", PROMPT_FINISH, 16)
            started.append(c)
            # L2: long, still generating at scrape2 (the second slot).
            l2 = StreamingCompletion(port, "long2_running", PROMPT_LONG2, LONG_N_PREDICT)
            l2.start(); started.append(l2)
            l2.first_chunk.wait(60) or _fail("long2 produced no token")
            # D: both slots busy, so it waits in the deferred queue.
            d = StreamingCompletion(port, "deferred", PROMPT_DEFERRED, 16)
            d.start(); started.append(d)
            wait_until(lambda: d.sent_at is not None, 10, "the deferred request to be sent")
            # at least 1 s for the server loop to take D and defer it, and the interval near 5 s
            time.sleep(max(1.0, INTERVAL_TARGET_S - (time.monotonic() - t1)))

            for r in (l1, l2):
                if r.done.is_set() or r.error:
                    _fail(f"{r.name} ended before scrape2 ({r.error!r})")
            if d.first_chunk.is_set() or d.error:
                _fail("the deferred request started before scrape2")
            running = [running_summary(l1), running_summary(l2)]
            s2 = scrape(port)
            t2 = time.monotonic()
            # still as planned after the scrape?
            for r in (l1, l2):
                if r.done.is_set():
                    _fail(f"{r.name} finished around scrape2")
            if d.first_chunk.is_set():
                _fail("the deferred request started around scrape2")
            finished = [finished_summary(b, mode), finished_summary(c, mode)]
        finally:
            for r in reversed(started):
                r.cancel()
            for r in started:
                r.join(5)

    expected = build_expected(mode, t2 - t1, finished, running, n_deferred=1)
    side = {"finished": finished, "running": running, "log": str(srv.log_path), "port": port}
    return s1, s2, expected, side


def _fail(msg: str):
    raise RuntimeError(msg)


def build_expected(mode: str, interval: float, finished: list[dict], running: list[dict], n_deferred: int) -> dict:
    started_between = finished + running  # every request that was launched between the scrapes
    prompt_tokens = sum(r["prompt_n"] for r in started_between)
    prompt_cached = sum(r["cache_n"] for r in started_between)
    gen_tokens = sum(r["predicted_n"] for r in finished)

    spec_errors = [r["spec_error"] for r in finished if r["spec_error"]]
    if mode == "spec":
        spec_draft_tokens = sum(r["draft_n"] for r in finished)
        spec_accepted = sum(r["draft_n_accepted"] for r in finished)
        if spec_errors:
            spec_drafts, per_pos = None, None
        else:
            spec_drafts = sum(r["spec_steps"] for r in finished)
            per_pos = [sum(r["spec_per_pos"][i] for r in finished) for i in range(SPEC_DRAFT_N_MAX)]
        setup = (f"llama-server (llama.cpp from llama-cpp-python {RELEASE}) --metrics -np {N_SLOTS} -c 8192, "
                 f"SmolLM2-135M-Instruct Q4_1 as target and draft (-md, --spec-type draft-simple, "
                 f"--spec-draft-n-max {SPEC_DRAFT_N_MAX}), CPU")
    else:
        # the counters are exported at 0 without a draft model (server-task.cpp:1554-1565)
        spec_draft_tokens, spec_accepted, spec_drafts, per_pos = 0, 0, 0, None
        setup = (f"llama-server (llama.cpp from llama-cpp-python {RELEASE}) --metrics -np {N_SLOTS} -c 8192, "
                 f"SmolLM2-135M-Instruct Q4_1, no draft model, CPU")

    load = ", ".join(
        f"{r['name']} (prompt_n {r['prompt_n']}, cache_n {r['cache_n']}, predicted_n {r['predicted_n']}"
        + (f", draft_n {r['draft_n']}, accepted {r['draft_n_accepted']}, steps {r['spec_steps']}" if mode == "spec" else "")
        + ")" for r in finished)
    load_running = ", ".join(
        f"{r['name']} (prompt_n {r['prompt_n']}, cache_n {r['cache_n']}, {r['predicted_n_so_far']} tokens streamed)"
        for r in running)
    notes = (
        "Real run, one server process, one engine. Between the scrapes: finished " + load + "; running at scrape2 "
        + load_running + f"; {n_deferred} request queued behind the two busy slots (deferred). "
        "prompt_tokens = prompt_n of all four started requests (llama-server adds prompt tokens per decode batch, "
        "so the two running requests' prompts are in scrape2); prompt_tokens_cached = their cache_n (added when a "
        "request starts; the repeated prompt keeps one token uncached). generation_tokens and the spec counters come "
        "only from the two finished requests: the running requests' tokens are added when they end. "
        "steps = null: n_decode_total counts llama_decode calls, one call batches several slots, not knowable from "
        "the responses (published, value not checked). gen_throughput = null: the predicted_tokens_seconds gauge is "
        "sum(predicted_n - 1) / sum(predicted_ms) of the requests finished since the last scrape (a per-request "
        "decode speed, reset at every scrape), not the server's live throughput. kv_cache_usage, prefix cache queries/hits, preemptions, "
        "latency histograms: not published by this release. Values are printed with C++ ostream defaults "
        "(6 significant digits; counts over 999999 would print as 1.23457e+06)."
    )
    if mode == "spec":
        notes += (" spec_drafts (verification steps) and spec_accepted_per_position are counted from the per-token "
                  "chunks (timings_per_token): draft_n grows once per step, then that step's accepted+1 tokens "
                  f"stream; positions 0..{SPEC_DRAFT_N_MAX - 1} (--spec-draft-n-max).")
        if spec_errors:
            notes += " Step recovery failed, so spec_drafts and per-position are null: " + "; ".join(spec_errors)
    else:
        notes += (" Without a draft model the three spec_decode_* counters are still exported, at 0 (increase 0); "
                  "the per-position counter is not written at all (null).")

    return {
        "server": SERVER,
        "release": RELEASE,
        "mode": mode,
        "setup": setup,
        "interval_s": round(interval, 3),
        "gauges": {
            "requests_running": len(running),
            "requests_waiting": n_deferred,
            "kv_cache_usage": None,
            "prefix_cache_hit_rate": None,
            "spec_accept_rate": None,
            "spec_accept_length": None,
            "gen_throughput": None,
        },
        "increase": {
            "prompt_tokens": prompt_tokens,
            "prompt_tokens_cached": prompt_cached,
            "generation_tokens": gen_tokens,
            "steps": {"published": True},
            "preemptions": None,
            "prefix_cache_queries": None,
            "prefix_cache_hits": None,
            "spec_drafts": spec_drafts,
            "spec_draft_tokens": spec_draft_tokens,
            "spec_accepted_tokens": spec_accepted,
            "spec_accepted_per_position": per_pos,
            "live_tokens": None,
        },
        "latency_count_increase": None,
        "latency_sum_increase": None,
        "prompt_tokens_meaning": ("prompt tokens evaluated, cached ones excluded (counted apart in "
                                  "prompt_tokens_cached_total), added per decode batch as they are computed, "
                                  "not at request end"),
        "counted_at_request_end": ["generation_tokens", "spec_drafts", "spec_draft_tokens", "spec_accepted_tokens",
                                   "spec_accepted_per_position"],
        "notes": notes,
    }


# --------------------------------------------------------------------------------------------------
# checks


SAMPLE_RE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*"'
                       r'(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*")*\})? (\S+)$')


def parse_exposition(text: bytes) -> dict[str, float]:
    """Every non-comment line must be `name value` or `name{labels} value`; returns {series: value}."""
    out = {}
    for ln, line in enumerate(text.decode("utf-8").split("\n"), 1):
        if line == "" or line.startswith("#"):
            continue
        m = SAMPLE_RE.match(line)
        if not m:
            raise ValueError(f"line {ln} is not `name value` / `name{{labels}} value`: {line!r}")
        value = float(m.group(3))  # accepts 1.23457e+06, NaN, +Inf
        out[m.group(1) + (m.group(2) or "")] = value
    return out


def check_with_prometheus_client(text: bytes) -> str:
    try:
        from prometheus_client.parser import text_string_to_metric_families
    except ImportError:
        return "prometheus_client not installed, skipped"
    n = sum(len(f.samples) for f in text_string_to_metric_families(text.decode("utf-8")))
    return f"prometheus_client parsed {n} samples"


def compare(expected: dict, s1: dict, s2: dict) -> list[str]:
    """Report only: how the scrapes' differences compare with expected.json (never written back)."""
    inc = lambda name: s2.get("llamacpp:" + name, math.nan) - s1.get("llamacpp:" + name, 0.0)  # noqa: E731
    e, g = expected["increase"], expected["gauges"]
    pairs = [
        ("prompt_tokens", e["prompt_tokens"], inc("prompt_tokens_total")),
        ("prompt_tokens_cached", e["prompt_tokens_cached"], inc("prompt_tokens_cached_total")),
        ("generation_tokens", e["generation_tokens"], inc("tokens_predicted_total")),
        ("spec_draft_tokens", e["spec_draft_tokens"], inc("spec_decode_num_draft_tokens_total")),
        ("spec_accepted_tokens", e["spec_accepted_tokens"], inc("spec_decode_num_accepted_tokens_total")),
        ("spec_drafts", e["spec_drafts"], inc("spec_decode_num_drafts_total")),
        ("requests_running", g["requests_running"], s2.get("llamacpp:requests_processing")),
        ("requests_waiting", g["requests_waiting"], s2.get("llamacpp:requests_deferred")),
    ]
    if e["spec_accepted_per_position"] is not None:
        for i, v in enumerate(e["spec_accepted_per_position"]):
            pairs.append((f"spec_accepted_per_position[{i}]", v,
                          inc(f'spec_decode_num_accepted_tokens_per_pos_total{{position="{i}"}}')))
    lines = []
    for name, want, got in pairs:
        if want is None:
            continue
        ok = got is not None and abs(want - got) <= 1e-5 * max(1.0, abs(want))
        lines.append(f"  {'ok ' if ok else 'DIFF'} {name}: expected {want} scrapes {got}")
    return lines


# --------------------------------------------------------------------------------------------------


def write_fixtures(releases_dir: pathlib.Path) -> list[str]:
    """Runs llama-server in modes single and spec, writes one folder per mode; returns the folder names."""
    releases_dir = pathlib.Path(releases_dir)
    written = []
    for mode in ("single", "spec"):
        s1, s2, expected, side = run_mode(mode)
        p1, p2 = parse_exposition(s1), parse_exposition(s2)  # raises on a malformed line
        folder = releases_dir / f"{SERVER}-{RELEASE}-{mode}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "scrape1.txt").write_bytes(s1)
        (folder / "scrape2.txt").write_bytes(s2)
        (folder / "expected.json").write_text(json.dumps(expected, indent=2) + "\n")
        written.append(folder.name)
        print(f"{folder.name}: {len(p1)} / {len(p2)} series; {check_with_prometheus_client(s1)}, "
              f"{check_with_prometheus_client(s2)}; server log {side['log']}", file=sys.stderr)
        for line in compare(expected, p1, p2):
            print(line, file=sys.stderr)
    return written


if __name__ == "__main__":
    names = write_fixtures(pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_RELEASES_DIR)
    print("\n".join(names))
