"""SOURCES.md: one section per release (kept across --only runs), plus a paragraph per
server on how the scrapes were produced."""

import re
from pathlib import Path

HEADER = """# Sources of the generated /metrics fixtures

Written by `scripts/metrics-fixtures/generate.py`; do not edit by hand. Every scrape is
the text the release's own metrics code produced through prometheus_client {pc}
(`generate_latest`, exposition format 0.0.4) while a script told it what happened (the
scripted load in `scripts/metrics-fixtures/load.py`, stepped by `sim.py`). expected.json is
computed from the same scripted facts, not from the text.

Only nondeterministic things are fixed: prometheus_client's clock (`prometheus_client.metrics.time`)
is replaced by the scripted clock (t = 0 is {epoch}, 2026-01-01T00:00:00Z), which sets the
`_created` samples and the timestamps that `multiprocess_mode="mostrecent"` compares; and
in multiprocess mode each process gives prometheus_client a fixed process identifier
(`values.MultiProcessValue(lambda: 101)`, 102 for the second API server) instead of
`os.getpid`, so file names, `pid` labels and the collector's output order repeat. prometheus_client's own process/platform/gc collectors are unregistered
(they are not the servers' metrics and vary from run to run); nothing else is edited.

## vLLM

Each API server is a real child process (multiprocessing, spawn) that imports the
release's real `vllm/v1/metrics/loggers.py`, `stats.py`, `prometheus.py`,
`vllm/v1/spec_decode/metrics.py` (and in new releases `utils.py`, `buckets.py`,
`cache_hit_source.py`) from the PyPI file; every other `vllm.*` module is a stub
(`scripts/metrics-fixtures/stubs.py`); `FinishReason` is executed from the release's
`vllm/v1/engine/__init__.py`, the `vllm.envs` defaults come from that file's TYPE_CHECKING
block, the cache config's fields (for `vllm:cache_config_info`) from the release's
`CacheConfig` class defaults with block_size 16, 2048 GPU blocks, prefix caching on.
The process builds `PrometheusStatLogger` as the release's AsyncLLM does (0.9.x: one per
engine, `setup_default_loggers`; later: one with `engine_indexes=[0, 1]`), calls
`log_engine_initialized()`, then for each engine step calls `record()` with the release's
own `SchedulerStats` / `IterationStats` / `FinishedRequestStats` / `SpecDecodingStats`
objects filled with that step's scripted facts. Mode `single`: one API server, the
scrape is `generate_latest(REGISTRY)`. Mode `multi`: two API servers with
PROMETHEUS_MULTIPROC_DIR; each engine step's scheduler stats go to one API server (the
engine core "returns stats to only one of the front-ends": the first client with outputs
in that step, else client 0) and each API server gets the outputs of its own requests;
the scrape is `MultiProcessCollector` over the directory, as the release's
`/metrics` does with several API servers. HTTP-layer metrics (prometheus-fastapi-instrumentator)
are not part of these fixtures.

## SGLang

{sglang}

## Releases
"""

SGLANG_PARAGRAPH_FILE = Path(__file__).resolve().parent / "sglang_sources_paragraph.md"


def load_existing(path: Path):
    if not path.exists():
        return {}
    text = path.read_text()
    out = {}
    for m in re.finditer(r"(?ms)^### (\S+) (\S+)\n.*?(?=^### |\Z)", text):
        server = {"vLLM": "vllm", "SGLang": "sglang"}.get(m.group(1), m.group(1))
        key = server + "-" + m.group(2)
        out[key] = m.group(0).rstrip() + "\n"
    return out


def write(path: Path, sections):
    from releases import PROMETHEUS_CLIENT_VERSION, RELEASES
    import load as L
    sg = SGLANG_PARAGRAPH_FILE.read_text().strip() if SGLANG_PARAGRAPH_FILE.exists() \
        else "(no SGLang release generated yet)"
    body = HEADER.format(pc=PROMETHEUS_CLIENT_VERSION, epoch=L.EPOCH, sglang=sg)
    known = [rel.key for rel in RELEASES]
    for key in known + sorted(k for k in sections if k not in known):
        if key in sections:   # sections written by others (e.g. llama-server) are kept
            body += "\n" + sections[key]
    path.write_text(body)
