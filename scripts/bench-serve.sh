#!/usr/bin/env bash
# The local server under load (docs/PERFORMANCE.md): serve-sim --endpoint replays one workload at
# concurrency C against inferscope-cli serve (exact f32 activations, and q8 activations as llama.cpp
# computes) and against llama-server -np C on the same model, the three alternating, ROUNDS times, in
# one window; then the HTTP path's cost: the in-process serve-sim (no HTTP) at --max-running C against
# serve-sim --endpoint on serve at the same C. Prints Markdown tables of medians over the rounds.
#   scripts/bench-serve.sh [MODEL] [ROUNDS] [CONCURRENCIES...]
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-models/SmolLM2-135M-Instruct.Q4_1.gguf}
rounds=${2:-2}
if (( $# > 2 )); then concurrencies=("${@:3}"); else concurrencies=(1 4 16 64); fi
cli=build/core/cli/inferscope-cli
# llama.cpp built for what this CPU has, as our kernels are chosen.
isa=()
grep -qw avx512f /proc/cpuinfo && isa=(--avx512)
llama_server=$(scripts/llama-server.sh "${isa[@]}")
threads=$(nproc)
ctx=256          # per sequence: every request fits (prompt <= 64, output 64)
port=18390       # each server gets the next port: one just stopped may still hold its own
workload() { echo "--generate-workload $(( $1 * 4 > 16 ? $1 * 4 : 16 )) --prompt-len 32:64 --output-len 64:64 --seed 7"; }
out=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$out"' EXIT

wait_ready() {
  for _ in $(seq 1 300); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "the server on port $port never became ready:" >&2
  cat "$out/server.log" >&2
  return 1
}

# One serve-sim JSON line: "tokens_per_second ttft_p50 ttft_p99 itl_p50 itl_p99" (latencies in ms).
summary() {
  python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
itl=sorted(x for r in d["requests"] for x in r.get("inter_token_latency_seconds") or [])
q=lambda v,p: v[min(len(v)-1,int(p*(len(v)-1)+0.5))]*1000 if v else float("nan")
print("%.1f %.1f %.1f %.2f %.2f" % (d["tokens_per_second"], d["time_to_first_token_seconds_p50"]*1000,
      d["time_to_first_token_seconds_p99"]*1000, q(itl,0.5), q(itl,0.99)))' "$1"
}

# run NAME C: starts NAME's server with C sequences, replays the workload on it, stops it.
run() {
  local name=$1 c=$2
  case $name in
    inferscope|inferscope-q8)
      local extra=()
      [[ $name == inferscope-q8 ]] && extra=(--activations q8)
      "$cli" serve -m "$model" --port $port -c $ctx --kv-budget-mib $(( c * 8 > 64 ? c * 8 : 64 )) --threads "$threads" \
        --max-queue 0 "${extra[@]}" >"$out/server.log" 2>&1 &
      ;;
    llama-server)
      "$llama_server" -m "$model" --port $port -np "$c" -c $(( c * ctx )) -t "$threads" >"$out/server.log" 2>&1 &
      ;;
  esac
  local pid=$!
  wait_ready
  # shellcheck disable=SC2046
  "$cli" serve-sim --endpoint "http://127.0.0.1:$port" --tokenizer "$model" --max-concurrency "$c" $(workload "$c") \
    --json >"$out/$name-$c.json" 2>"$out/client.log"
  kill -TERM $pid
  wait $pid 2>/dev/null || true
  summary "$out/$name-$c.json"
}

# The in-process run: the same workload through the engine alone, C at a time.
local_run() {
  # shellcheck disable=SC2046
  "$cli" serve-sim --model "$model" -c $ctx --kv-budget-mib $(( $1 * 8 > 64 ? $1 * 8 : 64 )) --threads "$threads" \
    --max-running "$1" $(workload "$1") --json >"$out/local-$1.json" 2>/dev/null
  summary "$out/local-$1.json"
}

median() { python3 -c 'import sys,statistics; print("%.2f" % statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }

declare -A results
for c in "${concurrencies[@]}"; do
  for round in $(seq 1 "$rounds"); do
    for name in inferscope inferscope-q8 llama-server local; do
      port=$((port + 1))
      if [[ $name == local ]]; then line=$(local_run "$c"); else line=$(run "$name" "$c"); fi
      results[$name,$c]+="$line;"
      echo "C=$c round $round $name: $line" >&2
    done
  done
done

column() {  # column NAME C FIELD(1-5): the median over the rounds
  local values=()
  IFS=';' read -r -a lines <<<"${results[$1,$2]}"
  for l in "${lines[@]}"; do values+=("$(cut -d' ' -f"$3" <<<"$l")"); done
  median "${values[@]}"
}

echo "| C | server | tok/s | TTFT p50 ms | TTFT p99 ms | ITL p50 ms | ITL p99 ms |"
echo "| ---: | --- | ---: | ---: | ---: | ---: | ---: |"
for c in "${concurrencies[@]}"; do
  for name in inferscope inferscope-q8 llama-server; do
    echo "| $c | $name | $(column $name "$c" 1) | $(column $name "$c" 2) | $(column $name "$c" 3) | $(column $name "$c" 4) | $(column $name "$c" 5) |"
  done
done
echo
echo "| C | in-process tok/s | serve over HTTP tok/s | HTTP cost |"
echo "| ---: | ---: | ---: | ---: |"
for c in "${concurrencies[@]}"; do
  here=$(column local "$c" 1)
  http=$(column inferscope "$c" 1)
  echo "| $c | $here | $http | $(python3 -c "print('%.1f %%' % (100 * (1 - $http / $here)))") |"
done
