#!/usr/bin/env bash
# The CUDA checks, on a machine with an NVIDIA GPU, from the build that scripts/gpu-build.sh staged
# (build-gpu/carry: this script needs no compiler, Qt, GoogleTest or network). The whole run has one
# deadline (GPU_CHECK_DEADLINE_S, default 420 s: a 15-minute device window holds a rerun), and its
# phases go in order of value; a phase that would start past the deadline is listed as not run, and
# one that starts is cut at it:
#   1. devices      what the CLI sees (name, compute capability, memory, driver and runtime)
#   2. conformance  tests/backend_ops' test_cuda_* programs: each kernel on the GPU against the CPU
#                   reference
#   3. end-to-end   tests/e2e's test_cuda_forward: the forward pass and the engine on the GPU against
#                   the CPU
#   4. host side    tests/unit's test_cuda_* programs, which need no device (the GPU's element maths
#                   as plain C++, the CUDA error classes): run against the device's own CUDA runtime,
#                   and not counted among the tests that ran on the GPU
#   5. kernels      bench --cuda-kernels: GEMV GB/s per weight type against a device copy, the prefill
#                   GEMM's TFLOP/s, paged decode attention GB/s, flash vs naive prefill
#   6. models       prefill and decode tok/s on --device cuda, small to large: the demo model when it
#                   is here (models/, not carried), then random-weight models written by
#                   write-synthetic-model on every core: SmolLM2-135M-shaped (q4_1, as the demo; decode with and
#                   without CUDA graphs), Llama-3.2-1B-shaped (f16), and with --with-7b Llama-2-7B-shaped
# The tests run with INFERSCOPE_REQUIRE_CUDA=1, so a test that finds no usable device fails, saying why,
# instead of skipping. What comes back is three files in $OUT (default gpu-check-out/), rewritten after
# every phase so that a cut run keeps what it measured: summary.md (first line: how many CUDA tests ran,
# failed and skipped; the phase table last, which is also the last thing printed), summary.json, and
# gpu-check-logs.tar.gz (every phase's log and JSON). --dry-run runs no program: each phase writes its
# command as its log (the files and the deadline's bookkeeping are real; tests/packaging checks them).
#   scripts/gpu-check.sh [--dry-run] [--with-7b] [CARRY_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
dry=0 with_7b=0 carry=build-gpu/carry
for arg in "$@"; do
  case $arg in
    --dry-run) dry=1 ;;
    --with-7b) with_7b=1 ;;
    -*) echo "usage: scripts/gpu-check.sh [--dry-run] [--with-7b] [CARRY_DIR]" >&2; exit 2 ;;
    *) carry=$arg ;;
  esac
done
out=${OUT:-gpu-check-out}
deadline=$((SECONDS + ${GPU_CHECK_DEADLINE_S:-420}))
bin=$carry/bin
mkdir -p "$out"
rm -f "$out/summary.md" "$out/summary.json" "$out/gpu-check-logs.tar.gz"
logs=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$logs" "$work"' EXIT
export INFERSCOPE_REQUIRE_CUDA=1

if (( !dry )); then
  [[ -x $bin/inferscope-cli ]] || { echo "gpu-check: $bin/inferscope-cli is missing: run scripts/gpu-build.sh first" >&2; exit 2; }
  # cuBLAS is not carried (too large): when the loader cannot find the soname the carried CLI asks for,
  # the device's CUDA toolkit's lib folder (its usual places, then anywhere under /usr and /opt).
  cublas=$(ldd "$bin/inferscope-cli" 2>/dev/null | awk '/libcublas\.so.*not found/ {print $1; exit}')
  cublas_dir=""
  if [[ -n $cublas ]]; then
    for d in "${CUDA_HOME:-/usr/local/cuda}"/{lib64,lib,targets/x86_64-linux/lib} \
             /usr/local/cuda*/{lib64,lib,targets/x86_64-linux/lib}; do
      [[ -e $d/$cublas ]] && { cublas_dir=$d; break; }
    done
    [[ -n $cublas_dir ]] || cublas_dir=$(dirname "$(find /usr /opt -name "$cublas" -print -quit 2>/dev/null)")
    [[ $cublas_dir != . ]] || { cublas_dir=""; echo "gpu-check: $cublas not found on this machine: the CUDA programs will not start" >&2; }
    echo "gpu-check: cuBLAS ($cublas) from ${cublas_dir:-nowhere}"
  fi
  export LD_LIBRARY_PATH="$carry/lib${cublas_dir:+:$cublas_dir}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

phases=()  # one JSON object per phase, in order
rows=()    # the same as table rows

# summarize: rewrites the three files from what the phases left so far.
summarize() {
  local tests=0 failed=0 skipped=0 f
  for f in "$logs"/*.gpu.json; do
    [[ -s $f ]] || continue
    tests=$((tests + $(grep -c '"result": ' "$f")))
    skipped=$((skipped + $(grep -c '"result": "SKIPPED"' "$f")))
    failed=$((failed + $(grep -c '"failures": \[' "$f")))
  done
  local verdict="$tests CUDA tests ran on the GPU: $failed failed, $skipped skipped"
  (( tests > 0 && skipped < tests )) || verdict="NOTHING WAS TESTED ON A GPU ($verdict)"
  local decode="" m
  for m in demo smollm2-shape; do
    [[ -s $logs/model-$m.json ]] && decode+="| $m | $(tg_ts "$logs/model-$m.json") | $(tg_ts "$logs/model-$m-no-graphs.json") |"$'\n'
  done
  {
    echo "gpu-check on $(hostname), $(date -u +%Y-%m-%dT%H:%MZ): $verdict"
    if [[ -s $logs/kernels.log ]]; then echo; cat "$logs/kernels.log"; fi
    if [[ -n $decode ]]; then
      printf '\n| decode tok/s (tg128) | CUDA graphs | INFERSCOPE_CUDA_GRAPHS=0 |\n| --- | ---: | ---: |\n%s' "$decode"
    fi
    printf '\n| phase | result | seconds |\n| --- | --- | ---: |\n'
    printf '%s\n' "${rows[@]}"
  } >"$out/summary.md"
  printf '{"tests": {"ran": %d, "failed": %d, "skipped": %d}, "dry_run": %s, "phases": [%s]}\n' \
    "$tests" "$failed" "$skipped" "$( ((dry)) && echo true || echo false)" "$(IFS=,; echo "${phases[*]}")" >"$out/summary.json"
  tar -czf "$out/gpu-check-logs.tar.gz" -C "$logs" .
}

# phase NAME LIMIT_S COMMAND...: runs the command (its output in NAME.log) for at most LIMIT_S seconds
# and no later than the deadline; past the deadline it is listed as not run.
phase() {
  local name=$1 limit=$2
  shift 2
  local left=$((deadline - SECONDS)) start=$SECONDS rc result
  if (( left <= 0 )); then
    phases+=("{\"phase\": \"$name\", \"result\": \"not run\", \"seconds\": 0}")
    rows+=("| $name | not run: past the deadline | 0 |")
    summarize
    return 1
  fi
  (( limit < left )) || limit=$left
  echo "== $name (at most ${limit} s)"
  if (( dry )); then
    printf 'dry run: %s\n' "$*" >"$logs/$name.log"
    rc=0
  else
    timeout "$limit" "$@" >"$logs/$name.log" 2>&1
    rc=$?
  fi
  tail -n 5 "$logs/$name.log"
  case $rc in
    0) result=ok ;;
    124) result="cut at ${limit} s" ;;
    *) result="failed (exit code $rc)" ;;
  esac
  phases+=("{\"phase\": \"$name\", \"result\": \"$result\", \"exit_code\": $rc, \"seconds\": $((SECONDS - start))}")
  rows+=("| $name | $result | $((SECONDS - start)) |")
  summarize
  return $rc
}

# tg_ts FILE: a bench JSON's decode tokens/s (its tg test's avg_ts: the keys come sorted, avg_ts first).
tg_ts() { awk '/"avg_ts"/ {gsub(/[^0-9.e+-]/, "", $2); ts = $2} /"test": "tg/ {print ts; exit}' "$1" 2>/dev/null; }

# gtest_phase NAME LIMIT_S [KIND]: one test_cuda_* program, its results as JSON beside its log: NAME.gpu.json
# (counted in the summary's first line) or, with KIND host, NAME.host.json.
demo=models/SmolLM2-135M-Instruct.Q4_1.gguf
filter=()
gtest_phase() {
  phase "$1" "$2" "$bin/$1" "${filter[@]}" --gtest_output="json:$logs/$1.${3:-gpu}.json"
}
# bench_model NAME FILE [VAR=VALUE]: prefill 512 and decode 128 tokens on the GPU, as JSON, with
# VAR=VALUE in the environment.
bench_model() {
  phase "model-$1" 120 env ${3:+"$3"} sh -c "'$bin/inferscope-cli' bench -m '$2' --device cuda -p 512 -n 128 -r 3 -o json > '$logs/model-$1.json'"
}

phase devices 30 "$bin/inferscope-cli" devices
# The demo model (92 MB) cannot be carried: without it, the tests on it are left out, and said so.
[[ -f $demo ]] || { echo "gpu-check: $demo is not here: its tests are left out"; filter=(--gtest_filter=-*DemoModel*); }
gtest_phase test_cuda_ops 120
gtest_phase test_cuda_attention 120
gtest_phase test_cuda_forward 180
gtest_phase test_cuda_element_math 30 host
gtest_phase test_cuda_error_class 30 host
phase kernels 90 "$bin/inferscope-cli" bench --cuda-kernels -r 5
phase kernels-json 90 sh -c "'$bin/inferscope-cli' bench --cuda-kernels -r 5 -o json > '$logs/kernels.json'"
# decode from CUDA graphs (the default) against the same steps launched one kernel at a time
if [[ -f $demo ]]; then
  bench_model demo "$demo"
  bench_model demo-no-graphs "$demo" INFERSCOPE_CUDA_GRAPHS=0
fi
if phase write-smollm2-shape 60 "$bin/write-synthetic-model" "$work/smollm2.gguf" --dim 576 --layers 30 --heads 9 \
     --kv-heads 3 --ffn 1536 --vocab 49152 --ctx 2048 --tied --type q4_1; then
  bench_model smollm2-shape "$work/smollm2.gguf"
  bench_model smollm2-shape-no-graphs "$work/smollm2.gguf" INFERSCOPE_CUDA_GRAPHS=0
fi
if phase write-1b-shape 90 "$bin/write-synthetic-model" "$work/1b.gguf" --dim 2048 --layers 16 --heads 32 --kv-heads 8 \
     --ffn 8192 --vocab 128256 --ctx 2048 --tied --type f16; then
  bench_model 1b-shape "$work/1b.gguf"
fi
rm -f "$work/1b.gguf"
if (( with_7b )) && phase write-7b-shape 150 "$bin/write-synthetic-model" "$work/7b.gguf" --dim 4096 --layers 32 \
     --heads 32 --kv-heads 32 --ffn 11008 --vocab 32000 --ctx 2048 --type f16; then
  bench_model 7b-shape "$work/7b.gguf"
fi

summarize
echo
cat "$out/summary.md"
