#!/usr/bin/env python3
"""Generate /metrics fixtures for vLLM and SGLang releases from the servers' own metrics code.

One command (from the repository root):

    python3 scripts/metrics-fixtures/generate.py [--only vllm-0.9.1 sglang-0.5.23 ...]

It creates ~/.cache/inferscope/metrics-fixtures/venv with the pinned prometheus_client
(and numpy, which vLLM's spec-decode metrics module imports) on first use and re-runs
itself there. Downloads (PyPI only, sha256-checked) are cached in the same folder.
Writes tests/fixtures/metrics/releases/<server>-<release>-<mode>/ and SOURCES.md there.
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from releases import PROMETHEUS_CLIENT_VERSION, RELEASES  # noqa: E402

NUMPY_VERSION = "2.2.6"
REPO = HERE.parent.parent
OUT = REPO / "tests/fixtures/metrics/releases"


def _ensure_venv():
    venv = Path(os.path.expanduser("~/.cache/inferscope/metrics-fixtures/venv"))
    py = venv / "bin/python"
    if Path(sys.prefix).resolve() == venv.resolve():
        return
    if not py.exists():
        subprocess.check_call([sys.executable, "-m", "venv", str(venv)])
    subprocess.check_call([str(py), "-m", "pip", "install", "-q",
                           f"prometheus_client=={PROMETHEUS_CLIENT_VERSION}",
                           f"numpy=={NUMPY_VERSION}"])
    os.execv(str(py), [str(py), __file__] + sys.argv[1:])


def write_fixture(name, scrape1, scrape2, expected):
    from prometheus_client.parser import text_string_to_metric_families
    d = OUT / name
    d.mkdir(parents=True, exist_ok=True)
    for fn, text in (("scrape1.txt", scrape1), ("scrape2.txt", scrape2)):
        list(text_string_to_metric_families(text))     # must parse
        assert len(text.encode()) < 100_000, (name, fn, len(text))
        (d / fn).write_text(text)
    (d / "expected.json").write_text(json.dumps(expected, indent=2) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="*", help="release keys, e.g. vllm-0.9.1 sglang-0.5.23")
    args = ap.parse_args()
    _ensure_venv()
    import sources_md
    import sglang_release
    import vllm_release
    OUT.mkdir(parents=True, exist_ok=True)
    sections = sources_md.load_existing(OUT / "SOURCES.md")
    for rel in RELEASES:
        if args.only and rel.key not in args.only:
            continue
        driver = vllm_release if rel.server == "vllm" else sglang_release
        print(f"{rel.key} ...", flush=True)
        try:
            sections[rel.key] = driver.generate(rel, write_fixture)
        except NotImplementedError as e:
            print(f"  skipped: {e}", flush=True)
    if not args.only or "llama-server" in " ".join(args.only or []):
        llama = HERE / "llama_server.py"
        if llama.exists():
            __import__("llama_server").write_fixtures(OUT)
    sources_md.write(OUT / "SOURCES.md", sections)


if __name__ == "__main__":
    main()
