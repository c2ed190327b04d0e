#!/usr/bin/env bash
# The CUDA checks, on a machine with an NVIDIA GPU, from the build that scripts/gpu-build.sh staged
# (build-gpu/carry: this script needs no compiler, Qt, GoogleTest or network). Under 5 minutes on an
# H200; every phase has a time limit, and each phase's result is written to $OUT (default
# gpu-check-out/) as soon as it ends, so a cut run keeps what it measured:
#   1. devices           what the CLI sees (name, compute capability, memory, driver and runtime)
#   2. conformance       every test_cuda_* program: each kernel against the CPU reference
#   3. kernels           bench --cuda-kernels: GEMV GB/s per weight type against a device copy, the
#                        prefill GEMM's TFLOP/s (cuBLAS) per weight type, paged
#                        decode attention GB/s at 1k/4k/16k, flash vs naive prefill (time, scratch)
#   4. models            decode and prefill tok/s on --device cuda (decode with and without CUDA
#                        graphs for the demo and SmolLM2-shaped models): the demo model when it is here
#                        (models/, not carried: 92 MB), and random-weight models written on the
#                        device by write-synthetic-model: SmolLM2-135M-shaped (q4_1, as the demo),
#                        Llama-3.2-1B-shaped and Llama-2-7B-shaped (f16)
# Then one table (gpu-check.md) and gpu-check.json list every phase with its exit code and time.
#   scripts/gpu-check.sh [CARRY_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
carry=${1:-build-gpu/carry}
out=${OUT:-gpu-check-out}
mkdir -p "$out"
bin=$carry/bin
# cuBLAS is not carried (too large): when the loader cannot find the soname the carried CLI asks for,
# the device's CUDA toolkit's lib folder (its usual places, then anywhere under /usr and /opt).
cublas=$(ldd "$carry/bin/inferscope-cli" 2>/dev/null | awk '/libcublas\.so.*not found/ {print $1; exit}')
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
[[ -x $bin/inferscope-cli ]] || { echo "gpu-check: $bin/inferscope-cli is missing: run scripts/gpu-build.sh first" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
phases=()

# phase NAME LIMIT_S COMMAND...: runs the command with a time limit, its output in $out/NAME.log.
phase() {
  local name=$1 limit=$2
  shift 2
  local start=$SECONDS rc
  echo "== $name (at most ${limit} s)"
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  rc=$?
  tail -n 5 "$out/$name.log"
  phases+=("{\"phase\": \"$name\", \"exit_code\": $rc, \"seconds\": $((SECONDS - start))}")
  printf '[%s]\n' "$(IFS=,; echo "${phases[*]}")" >"$out/gpu-check.json"
  return 0
}

phase devices 30 "$bin/inferscope-cli" devices
# The demo model (92 MB) cannot be carried: without it, the tests on it are left out, and said so.
demo=models/SmolLM2-135M-Instruct.Q4_1.gguf
filter=()
[[ -f $demo ]] || { echo "gpu-check: $demo is not here: its tests are left out"; filter=(--gtest_filter=-*DemoModel*); }
for t in "$bin"/test_cuda_*; do
  phase "conformance-$(basename "$t")" 120 "$t" "${filter[@]}" --gtest_output="json:$out/$(basename "$t").json"
done
phase kernels-json 90 sh -c "'$bin/inferscope-cli' bench --cuda-kernels -r 5 -o json > '$out/kernels.json'"
phase kernels 90 "$bin/inferscope-cli" bench --cuda-kernels -r 5

# bench_model NAME FILE [VAR=VALUE]: prefill 512 and decode 128 tokens on the GPU, as JSON and as a
# table, with VAR=VALUE in the environment.
bench_model() {
  phase "model-$1" 120 env ${3:+"$3"} sh -c "'$bin/inferscope-cli' bench -m '$2' --device cuda -p 512 -n 128 -r 3 -o json > '$out/model-$1.json'"
}
# tg_ts FILE: a bench JSON's decode tokens/s (its tg test's avg_ts: the keys come sorted, avg_ts first).
tg_ts() { awk '/"avg_ts"/ {gsub(/[^0-9.e+-]/, "", $2); ts = $2} /"test": "tg/ {print ts; exit}' "$1" 2>/dev/null; }
# decode from CUDA graphs (the default) against the same steps launched one kernel at a time
[[ -f $demo ]] && bench_model demo "$demo" && bench_model demo-no-graphs "$demo" INFERSCOPE_CUDA_GRAPHS=0
phase write-smollm2-shape 60 "$bin/write-synthetic-model" "$work/smollm2.gguf" --dim 576 --layers 30 --heads 9 \
  --kv-heads 3 --ffn 1536 --vocab 49152 --ctx 2048 --tied --type q4_1
bench_model smollm2-shape "$work/smollm2.gguf"
bench_model smollm2-shape-no-graphs "$work/smollm2.gguf" INFERSCOPE_CUDA_GRAPHS=0
phase write-1b-shape 90 "$bin/write-synthetic-model" "$work/1b.gguf" --dim 2048 --layers 16 --heads 32 --kv-heads 8 \
  --ffn 8192 --vocab 128256 --ctx 2048 --tied --type f16
bench_model 1b-shape "$work/1b.gguf"
rm -f "$work/1b.gguf"
phase write-7b-shape 150 "$bin/write-synthetic-model" "$work/7b.gguf" --dim 4096 --layers 32 --heads 32 --kv-heads 32 \
  --ffn 11008 --vocab 32000 --ctx 2048 --type f16
bench_model 7b-shape "$work/7b.gguf"

{
  echo "# gpu-check on $(hostname), $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  cat "$out/kernels.log"
  echo
  echo "| phase | exit code | seconds |"
  echo "| --- | ---: | ---: |"
  for p in "${phases[@]}"; do
    sed -E 's/.*"phase": "([^"]*)", "exit_code": ([0-9]+), "seconds": ([0-9]+).*/| \1 | \2 | \3 |/' <<<"$p"
  done
  echo
  echo "| decode tok/s (tg128) | CUDA graphs | INFERSCOPE_CUDA_GRAPHS=0 |"
  echo "| --- | ---: | ---: |"
  for m in demo smollm2-shape; do
    [[ -s $out/model-$m.json ]] && echo "| $m | $(tg_ts "$out/model-$m.json") | $(tg_ts "$out/model-$m-no-graphs.json") |"
  done
  for f in "$out"/model-*.json; do
    [[ -s $f ]] && { echo; echo "$(basename "$f" .json):"; cat "$f"; }
  done
} | tee "$out/gpu-check.md"
