#!/usr/bin/env python3
"""The dry run's roofline against the steps this machine really takes (docs/PERFORMANCE.md).

For each batch size B and context C, B requests of C prompt and N output tokens arrive together; the
real model serves them (serve-sim on the wall clock) and the dry run prices the same workload on a
device profile (serve-sim --dry-run --device-profile PROFILE). Both runs schedule the same steps, so
each measured step is set against its predicted one. Decode steps (every running request computing
one token) and the prefill step (all B prompts at once) are reported apart, with the mean absolute
percentage error over all (B, C) and the worst point.

  validate-step-costs.py CLI MODEL PROFILE [--batches 1,2,4,8,16] [--contexts 128,512,1024]
      [--output-len 16] [--threads 2] [--repeat 2]
PROFILE: e.g. what `inferscope-cli bench -m MODEL -n 64 --device-profile-out PROFILE` wrote.
Each real run is repeated and the fastest median kept: other work on a shared machine only slows a
step. A benchmark: its timings depend on the machine and its load, so it is never a unit test.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def steps(cli, model, batch, context, output_len, threads, dry_run_profile=None):
    """The step timeline of one serve-sim run: (prefill steps, decode steps), each a list of seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        metrics = os.path.join(tmp, "metrics.json")
        cmd = [cli, "serve-sim", "-m", model, "--generate-workload", str(batch), "--prompt-len", f"{context}:{context}",
               "--output-len", f"{output_len}:{output_len}", "-t", str(threads), "--kv-budget-mib", "512",
               "--metrics-json", metrics, "--json"]
        if dry_run_profile:
            cmd += ["--dry-run", "--device-profile", dry_run_profile]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(metrics) as f:
            timeline = json.load(f)["step_timeline"]
    prefill = [s["duration_s"] for s in timeline if s["prefill_tokens"] == batch * context]
    decode = [s["duration_s"] for s in timeline if s["prefill_tokens"] == 0 and s["decode_tokens"] == batch]
    return prefill, decode


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("cli")
    p.add_argument("model")
    p.add_argument("profile")
    p.add_argument("--batches", default="1,2,4,8,16")
    p.add_argument("--contexts", default="128,512,1024")
    p.add_argument("--output-len", type=int, default=16)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=2)
    a = p.parse_args()
    rows = []
    for context in map(int, a.contexts.split(",")):
        for batch in map(int, a.batches.split(",")):
            runs = [steps(a.cli, a.model, batch, context, a.output_len, a.threads) for _ in range(a.repeat)]
            predicted = steps(a.cli, a.model, batch, context, a.output_len, a.threads, a.profile)
            for i, kind in enumerate(("prefill", "decode")):
                q = predicted[i]
                if any(not run[i] or len(run[i]) != len(q) for run in runs):
                    sys.exit(f"B={batch} C={context}: the real and dry runs took different {kind} steps")
                # the median step against its prediction (decode steps differ only by a few positions)
                m = min(statistics.median(run[i]) for run in runs)
                rows.append((kind, batch, context, m, statistics.median(q)))
    print("| step | batch | context | measured ms | predicted ms | error |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for kind, batch, context, m, q in rows:
        print(f"| {kind} | {batch} | {context} | {m * 1e3:.2f} | {q * 1e3:.2f} | {100 * (q - m) / m:+.1f}% |")
    for kind in ("decode", "prefill"):
        errors = [(abs(q - m) / m, b, c) for k, b, c, m, q in rows if k == kind]
        worst = max(errors)
        print(f"\n{kind}: mean absolute percentage error {100 * statistics.mean(e for e, _, _ in errors):.1f}%, "
              f"worst {100 * worst[0]:.1f}% at batch {worst[1]}, context {worst[2]}")


if __name__ == "__main__":
    main()
