"""Turn the scripted load (load.py) into engine steps: a tiny deterministic scheduler,
the same for every server. Each step says what the engine's scheduler would report
(running / waiting / KV usage / prefix-cache lookups / spec-decode counts) and what each
request got (tokens, first token, finish). The drivers hand these facts to each release's
own metrics code; expected.json is computed from these facts too, never from the text."""

import math

import load as L


def _r(x):
    return round(x, 6)


def simulate(spec=True):
    reqs = {r["rid"]: dict(r) for r in L.requests()}
    steps = []
    for engine in sorted({r["engine"] for r in reqs.values()}):
        steps += _simulate_engine(engine, spec, [r for r in reqs.values() if r["engine"] == engine])
    steps.sort(key=lambda s: (s["t_out"], s["engine"]))
    return steps, reqs


def _simulate_engine(engine, spec, reqs):
    pending = sorted(reqs, key=lambda r: r["arrival"])
    waiting, running = [], []
    # scripted preemptions: at the first step at or after the time where the request runs
    preempt = {rid: round(t / L.STEP_S) for e, rid, t in L.PREEMPT if e == engine}
    steps = []
    k = 0
    t_end = L.T_SCRAPE2 + 0.0001
    while (k + 1) * L.STEP_S <= t_end:
        t0 = _r(k * L.STEP_S)
        t_out = _r((k + 1) * L.STEP_S)
        while pending and pending[0]["arrival"] <= t0:
            r = pending.pop(0)
            r.update(generated=0, first_token_ts=None, scheduled_ts=None, last_token_ts=None,
                     preempted=0, pending_preempt_event=False, decode_steps=0)
            waiting.append(r)
        if not waiting and not running:
            k += 1
            continue
        step = dict(engine=engine, t_start=t0, t_out=t_out, outputs=[],
                    prefix=dict(requests=0, queries=0, hits=0),
                    prefix_preempted=dict(requests=0, queries=0, hits=0),
                    spec=dict(drafts=0, draft_tokens=0, accepted=0,
                              per_pos=[0] * L.NUM_SPEC_TOKENS, accepts=[]),
                    preempted_now=[], computed_tokens=0)
        # scripted preemption: back to the front of the queue
        for r in list(running):
            if r["rid"] in preempt and k >= preempt[r["rid"]] and r["generated"] > 0:
                del preempt[r["rid"]]
                running.remove(r)
                r["preempted"] += 1
                r["pending_preempt_event"] = True
                waiting.insert(0, r)
                step["preempted_now"].append(r["rid"])
        decoding = list(running)
        admitted = []
        while waiting and len(running) < L.MAX_RUNNING and not step["preempted_now"]:
            r = waiting.pop(0)
            running.append(r)
            admitted.append(r)
        # decode steps with speculative decoding
        for r in decoding:
            remaining = r["output"] - r["generated"]
            a = L.ACCEPT_PATTERN[(r["rid"] + r["decode_steps"]) % len(L.ACCEPT_PATTERN)]
            a = min(a, remaining - 1) if spec else 0
            if spec:
                step["spec"]["accepts"].append(a)
                step["spec"]["drafts"] += 1
                step["spec"]["draft_tokens"] += L.NUM_SPEC_TOKENS
                step["spec"]["accepted"] += a
                for i in range(a):
                    step["spec"]["per_pos"][i] += 1
            r["decode_steps"] += 1
            _emit(step, r, a + 1, first=False)
        # prefills (new requests) and recomputation (preempted ones)
        for r in admitted:
            if r["first_token_ts"] is None:
                step["prefix"]["requests"] += 1
                step["prefix"]["queries"] += r["prompt"]
                step["prefix"]["hits"] += r["cached"]
                step["computed_tokens"] += r["prompt"] - r["cached"]
                r["scheduled_ts"] = t0
                _emit(step, r, 1, first=True)
            else:
                known = r["prompt"] + r["generated"]
                hits = (r["prompt"] // L.BLOCK_SIZE) * L.BLOCK_SIZE
                step["prefix_preempted"]["requests"] += 1
                step["prefix_preempted"]["queries"] += known
                step["prefix_preempted"]["hits"] += hits
                step["computed_tokens"] += known - hits
                _emit(step, r, 1, first=False)
        for o in step["outputs"]:
            if o["finished"]:
                running.remove(o["req"])
        blocks = sum(math.ceil((r["prompt"] + r["generated"]) / L.BLOCK_SIZE) for r in running)
        step["num_running"] = len(running)
        step["num_waiting"] = len(waiting)
        step["waiting_by_priority"] = {}
        for r in waiting:
            step["waiting_by_priority"][r["priority"]] = \
                step["waiting_by_priority"].get(r["priority"], 0) + 1
        step["running_by_priority"] = {}
        for r in running:
            step["running_by_priority"][r["priority"]] = \
                step["running_by_priority"].get(r["priority"], 0) + 1
        step["kv_blocks_used"] = blocks
        step["kv_usage"] = blocks / L.NUM_GPU_BLOCKS
        step["running_tokens"] = sum(r["prompt"] + r["generated"] for r in running)
        # client order of this step's outputs (the order the engine lists them)
        order = []
        for o in step["outputs"]:
            if o["client"] not in order:
                order.append(o["client"])
        step["client_order"] = order
        steps.append(step)
        k += 1
    return steps


def _emit(step, r, n, first):
    t = step["t_out"]
    out = dict(rid=r["rid"], client=r["client"], req=r, new_tokens=n, first=first,
               prompt=r["prompt"], cached=r["cached"], priority=r["priority"],
               preempted_event=r["pending_preempt_event"], finished=None)
    r["pending_preempt_event"] = False
    if first:
        out["ttft"] = _r(t - r["arrival"])
        r["first_token_ts"] = t
    else:
        out["itl"] = _r(t - r["last_token_ts"])
    r["last_token_ts"] = t
    r["generated"] += n
    if r["generated"] >= r["output"]:
        gen = r["generated"]
        out["finished"] = dict(
            reason="length" if gen >= r["max_tokens"] else "stop",
            e2e=_r(t - r["arrival"]),
            queued=_r(r["scheduled_ts"] - r["arrival"]),
            prefill=_r(r["first_token_ts"] - r["scheduled_ts"]),
            inference=_r(t - r["scheduled_ts"]),
            decode=_r(t - r["first_token_ts"]),
            tpot=_r((t - r["first_token_ts"]) / (gen - 1)) if gen > 1 else 0.0,
            prompt=r["prompt"], generated=gen, max_tokens=r["max_tokens"],
            cached=r["cached"], preemptions=r["preempted"])
    step["outputs"].append(out)
