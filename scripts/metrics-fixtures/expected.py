"""expected.json from the simulated steps (what the scripts told the servers' code),
never from the scrape text."""

import itertools

import load as L


def _r(x, n=6):
    return round(x, n)


def window(steps, engines, t_lo=L.T_SCRAPE1, t_hi=L.T_SCRAPE2):
    return [s for s in steps if s["engine"] in engines and t_lo < s["t_out"] <= t_hi + 1e-9]


def last_step(steps, engine, t=L.T_SCRAPE2):
    prior = [s for s in steps if s["engine"] == engine and s["t_out"] <= t + 1e-9]
    return prior[-1] if prior else None


def outputs(steps):
    return [o for s in steps for o in s["outputs"]]


def latency(steps):
    outs = outputs(steps)
    fin = [o["finished"] for o in outs if o["finished"]]
    ttft = [o["ttft"] for o in outs if o["first"]]
    itl = [o["itl"] for o in outs if not o["first"]]
    counts = dict(ttft=len(ttft), inter_token=len(itl), e2e=len(fin), queue=len(fin))
    sums = dict(ttft=_r(sum(ttft)), inter_token=_r(sum(itl)),
                e2e=_r(sum(f["e2e"] for f in fin)), queue=_r(sum(f["queued"] for f in fin)))
    return counts, sums


def vllm(version, mode, steps, routing, spec, engines, per_pid_kv, preempted_separate,
         prompt_cached_published, setup, notes):
    w = window(steps, engines)
    outs = outputs(w)
    last = {e: last_step(steps, e) for e in engines}
    kv_true = _r(sum(last[e]["kv_usage"] for e in engines) / len(engines))
    if per_pid_kv:
        # value each API server process last wrote for each engine (0.0 = created, never set)
        per = {}
        for e in engines:
            vals = []
            for c in (0, 1):
                recs = [r for r in routing if r["engine"] == e and r["client"] == c and
                        r["sched"] and r["t"] <= L.T_SCRAPE2 + 1e-9]
                v = 0.0
                if recs:
                    t = recs[-1]["t"]
                    v = next(s["kv_usage"] for s in steps if s["engine"] == e and s["t_out"] == t)
                vals.append(v)
            per[e] = vals
        combos = sorted({_r(sum(c) / len(c)) for c in itertools.product(*per.values())})
        plain = _r(sum(sum(v) for v in per.values()) / sum(len(v) for v in per.values()))
        kv = {"any_of": combos}
        notes.append("vllm:kv_cache_usage_perc has no multiprocess_mode in this release "
                     "(prometheus_client default 'all'): one sample per engine per API server "
                     "pid; per-pid values per engine: "
                     + ", ".join(f"engine {e}: {per[e]}" for e in engines)
                     + f"; true mean {kv_true}; plain mean of all copies {plain}"
                     + (" (coincides with one of any_of)" if plain in combos else ""))
    else:
        kv = kv_true
    pref_q = sum(s["prefix"]["queries"] + (0 if preempted_separate else
                                           s["prefix_preempted"]["queries"]) for s in w)
    pref_h = sum(s["prefix"]["hits"] + (0 if preempted_separate else
                                        s["prefix_preempted"]["hits"]) for s in w)
    n_obs = sum(1 for r in routing if r["engine"] in engines and r["outputs"] and
                L.T_SCRAPE1 < r["t"] <= L.T_SCRAPE2 + 1e-9)
    counts, sums = latency(w)
    sp = [s["spec"] for s in w]
    return {
        "server": "vllm", "release": version, "mode": mode, "setup": setup,
        "interval_s": L.INTERVAL_S,
        "gauges": {
            "requests_running": sum(last[e]["num_running"] for e in engines),
            "requests_waiting": sum(last[e]["num_waiting"] for e in engines),
            "kv_cache_usage": kv,
            "prefix_cache_hit_rate": None, "spec_accept_rate": None,
            "spec_accept_length": None, "gen_throughput": None,
        },
        "increase": {
            "prompt_tokens": sum(o["prompt"] for o in outs if o["first"]),
            "prompt_tokens_cached": sum(o["cached"] for o in outs if o["first"])
            if prompt_cached_published else None,
            "generation_tokens": sum(o["new_tokens"] for o in outs),
            "steps": n_obs,
            "preemptions": sum(1 for o in outs if o["preempted_event"]),
            "prefix_cache_queries": pref_q,
            "prefix_cache_hits": pref_h,
            "spec_drafts": sum(x["drafts"] for x in sp) if spec else None,
            "spec_draft_tokens": sum(x["draft_tokens"] for x in sp) if spec else None,
            "spec_accepted_tokens": sum(x["accepted"] for x in sp) if spec else None,
            "spec_accepted_per_position": [sum(x["per_pos"][i] for x in sp)
                                           for i in range(L.NUM_SPEC_TOKENS)] if spec else None,
            "live_tokens": None,
        },
        "latency_count_increase": counts,
        "latency_sum_increase": sums,
        "prompt_tokens_meaning": "all prompt tokens of a request, cached included, counted "
                                 "once when its first token is output",
        "counted_at_request_end": [],
        "notes": "; ".join(notes),
    }
