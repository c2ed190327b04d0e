#!/usr/bin/env python3
"""inferscope-cli serve scraped by a real Prometheus server (Debian's prometheus) every second while
clients stream completions: a PromQL rate() over vLLM's generation counter answers with the rate the
clients saw, and the other vLLM series a dashboard queries are there, labelled with the model.

    prometheus_scrape_test.py INFERSCOPE_CLI MODEL.gguf

Exits non-zero naming the first check that failed.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

from serve_process import start_serve

CLIENTS = 4
LOAD_S = 8


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_prometheus(target, work):
    port = free_port()
    config = os.path.join(work, "prometheus.yml")
    with open(config, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                f"scrape_configs:\n  - job_name: inferscope\n    static_configs:\n      - targets: ['{target}']\n")
    log = open(os.path.join(work, "prometheus.log"), "w")
    prometheus = subprocess.Popen(["prometheus", f"--config.file={config}", f"--storage.tsdb.path={work}/data",
                                   f"--web.listen-address=127.0.0.1:{port}"], stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 30
    while True:
        try:
            with urllib.request.urlopen(url + "/-/ready", timeout=2) as r:
                if r.status == 200:
                    return prometheus, url
        except OSError:
            pass
        if prometheus.poll() is not None or time.time() > deadline:
            prometheus.kill()
            sys.exit("prometheus did not start:\n" + open(os.path.join(work, "prometheus.log")).read())
        time.sleep(0.2)


def query(prometheus_url, promql):
    with urllib.request.urlopen(prometheus_url + "/api/v1/query?" + urllib.parse.urlencode({"query": promql}),
                                timeout=10) as r:
        answer = json.load(r)
    check(answer["status"] == "success", f"{promql}: {answer}")
    return answer["data"]["result"]


def completion(base, prompt):
    body = json.dumps({"prompt": prompt, "max_tokens": 48, "ignore_eos": True, "temperature": 0}).encode()
    request = urllib.request.Request(base + "/v1/completions", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as r:
        return json.load(r)["usage"]["completion_tokens"]


def check(condition, what):
    if not condition:
        raise AssertionError(what)


def main():
    cli, model = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="inferscope-prometheus-")
    server, base_url = start_serve(cli, model)
    base = base_url[: -len("/v1")]
    prometheus = None
    try:
        prometheus, prometheus_url = start_prometheus(base[len("http://"):], work)
        # Wait for the first scrape, so the counter's start is on record before the load.
        deadline = time.time() + 20
        while not query(prometheus_url, "up{job='inferscope'} == 1"):
            check(time.time() < deadline, "prometheus never scraped the server")
            time.sleep(0.5)
        time.sleep(2)

        generated, lock = [0], threading.Lock()
        stop = time.time() + LOAD_S

        def client(i):
            n = 0
            while time.time() < stop:
                tokens = completion(base, f"Client {i}, request {n}: once upon a time")
                with lock:
                    generated[0] += tokens
                n += 1

        started = time.time()
        threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
        for t in threads:
            t.start()
        time.sleep(LOAD_S / 2)
        # While the load runs: the rate over the last 4 seconds.
        during = query(prometheus_url, "rate(vllm:generation_tokens_total[4s])")
        for t in threads:
            t.join()
        seen_rate = generated[0] / (time.time() - started)
        time.sleep(2)  # one more scrape after the last request

        check(len(during) == 1, f"one series of vllm:generation_tokens_total: {during}")
        check(during[0]["metric"].get("model_name") == os.path.splitext(os.path.basename(model))[0],
              f"labelled with the model: {during[0]['metric']}")
        rate = float(during[0]["value"][1])
        check(0.5 * seen_rate < rate < 2 * seen_rate,
              f"rate() {rate:.1f} tokens/s is not near the {seen_rate:.1f} tokens/s the clients saw")

        total = query(prometheus_url, "vllm:generation_tokens_total")
        check(float(total[0]["value"][1]) == generated[0],
              f"the counter {total[0]['value'][1]} != the {generated[0]} tokens the clients were sent")
        requests = query(prometheus_url, "sum(vllm:request_success_total)")
        check(float(requests[0]["value"][1]) > 0, f"requests counted: {requests}")
        p50 = query(prometheus_url, "histogram_quantile(0.5, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket[10s])))")
        check(p50 and float(p50[0]["value"][1]) > 0, f"a TTFT median from the histogram: {p50}")
        usage = query(prometheus_url, "max_over_time(vllm:kv_cache_usage_perc[20s])")
        check(usage and 0 < float(usage[0]["value"][1]) <= 1, f"KV usage seen under load: {usage}")
        print(f"prometheus: rate {rate:.1f} tokens/s while the clients saw {seen_rate:.1f}; "
              f"{generated[0]} tokens counted; TTFT p50 {float(p50[0]['value'][1]) * 1000:.1f} ms")
    finally:
        if prometheus is not None:
            prometheus.terminate()
            prometheus.wait(timeout=30)
        server.send_signal(signal.SIGTERM)
        code = server.wait(timeout=60)
        shutil.rmtree(work, ignore_errors=True)
    check(code == 0, f"the server exited {code} after SIGTERM")


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        sys.exit(f"FAILED: {e}")
    print("PASSED")
