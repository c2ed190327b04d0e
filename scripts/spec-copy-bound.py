#!/usr/bin/env python3
"""The most any copy-from-context proposer (n-gram, prompt lookup) can gain on one answer.

An oracle that knows, at every step, the longest run of the coming output tokens that occurs
somewhere earlier in the context (prompt + output so far) drafts min(k, run) tokens, all accepted,
and emits one more; a step with nothing to copy is a plain decode step. With the decode step c and
the verify pass v(d) of d + 1 tokens measured by `bench --spec-sweep`, its speed-up is

    bound(k) = (output tokens) * c / sum over its steps of (c if d == 0 else v(d))

No proposer that copies from the context drafts more accepted tokens per step, so a target above
max_k bound(k) cannot be met on that answer and that machine (docs/PERFORMANCE.md).

  spec-copy-bound.py PROMPT_IDS.json ANSWER.json STEP_MS VERIFY_MS_K1,...,VERIFY_MS_KN
PROMPT_IDS.json: `inferscope-cli tokenize --json` of the prompt; ANSWER.json: `generate --json`.
"""
import json
import sys


def longest_copy(context, future):
    """Length of the longest prefix of `future` found as a contiguous run in `context`."""
    best = 0
    for start in range(len(context)):
        n = 0
        while n < len(future) and start + n < len(context) and context[start + n] == future[n]:
            n += 1
        best = max(best, n)
    return best


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        prompt = json.load(f)["ids"]
    with open(sys.argv[2]) as f:
        answer = json.load(f)["tokens"]
    step = float(sys.argv[3])
    verify = [float(v) for v in sys.argv[4].split(",")]
    print("| k | oracle steps | tokens per step | bound |")
    print("| ---: | ---: | ---: | ---: |")
    for k in range(1, len(verify) + 1):
        i, steps, cost = 0, 0, 0.0
        while i < len(answer):
            drafted = min(k, longest_copy(prompt + answer[:i], answer[i:i + k]))
            drafted = min(drafted, len(answer) - i - 1)  # the last token is always emitted by the target
            cost += step if drafted == 0 else verify[drafted - 1]
            i += drafted + 1
            steps += 1
        print(f"| {k} | {steps} | {len(answer) / steps:.2f} | {len(answer) * step / cost:.2f}× |")


if __name__ == "__main__":
    main()
