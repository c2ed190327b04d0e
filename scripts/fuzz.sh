#!/usr/bin/env bash
# Builds every libFuzzer target (tests/fuzz) with clang in build-fuzz/, replays the inputs that once
# crashed one (tests/fuzz/regressions/TARGET/), then fuzzes each target for SECONDS (default 20), two
# at a time, starting from a copy of its seed corpus (tests/fuzz/corpus/TARGET/), so the committed
# corpus never grows. Prints one line per target (executions, executions per second, corpus) and
# last "N passed, N failed"; exits non-zero when a target fails to build, or a replay or the run
# crashes, hangs or runs out of memory (the input is kept in build-fuzz/fuzz-run/TARGET/).
#   scripts/fuzz.sh [SECONDS_PER_TARGET]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
[[ $seconds =~ ^[0-9]+$ ]] || { echo "usage: scripts/fuzz.sh [SECONDS_PER_TARGET]" >&2; exit 2; }
build=build-fuzz
# libclang-rt-dev holds clang's libFuzzer (clang only recommends it).
scripts/install-packages.sh clang libclang-rt-dev cmake ninja-build nlohmann-json3-dev libcurl4-openssl-dev libcpp-httplib-dev pkgconf \
  unicode-data python3

# -O1 without NDEBUG: asserts stay on; line tables (-g1) name file and line in reports.
scripts/configure.sh "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DINFERSCOPE_FUZZ=ON \
  -DINFERSCOPE_GUI=OFF -DINFERSCOPE_CUDA=OFF -DINFERSCOPE_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1"
# -k 0: a target that fails to build leaves the others to build and run.
built=yes
cmake --build "$build" -j "$(nproc)" --target fuzz_targets -- -k 0 || built=no

# libFuzzer's limits for every run: inputs up to 16 KiB (the largest seed, a vLLM scrape, has 14.4),
# 10 s per input before it counts as a hang, 2 GiB of memory before it counts as running out of it.
limits=(-max_len=16384 -timeout=10 -rss_limit_mb=2048)
# A run that outlives libFuzzer's own clock by two minutes is stopped and counts as a hang, so a stuck
# target turns the run red instead of holding CI until its time runs out.
deadline() { timeout --kill-after=10 "$1" "${@:2}"; }
runs=$build/fuzz-run
rm -rf "$runs"
mkdir -p "$runs"

# Replays TARGET's regression inputs, then fuzzes it; writes its summary line to $runs/TARGET/result.
fuzz_one() {
  local target=$1 bin=$build/tests/fuzz/$1 dir=$runs/$1
  mkdir -p "$dir"
  # After a failed build, a target that still has work to do is one that failed (or an old binary).
  if [[ $built == no && $(cmake --build "$build" --target "$target" -- -n) != *"no work to do"* ]]; then
    echo "$target: FAILED to build" >"$dir/result"
    return
  fi
  local regressions=(tests/fuzz/regressions/"$target"/*)
  if [[ -e ${regressions[0]} ]] && ! deadline 120 "$bin" "${limits[@]}" -artifact_prefix="$dir/" "${regressions[@]}" </dev/null >"$dir/replay.log" 2>&1; then
    echo "$target: FAILED replaying tests/fuzz/regressions/$target (see $dir/replay.log)" >"$dir/result"
    return
  fi
  cp -r "tests/fuzz/corpus/$target" "$dir/corpus"
  local dict=()
  [[ ! -f $bin.dict ]] || dict=(-dict="$bin.dict")  # the format's tokens, for the mutations to splice in
  local status=ok rc=0
  deadline $((seconds + 120)) "$bin" "${limits[@]}" "${dict[@]}" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$dir/" "$dir/corpus" </dev/null >"$dir/run.log" 2>&1 || rc=$?
  if ((rc == 124 || rc == 137)); then
    status="FAILED, still running $((seconds + 120)) s after it started (see $dir/run.log)"
  elif ((rc != 0)); then
    status="FAILED, input $(find "$dir" -maxdepth 1 \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' \) | tr '\n' ' ')(see $dir/run.log)"
  fi
  local execs rate
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/run.log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/run.log")
  printf '%s: %s, %s executions (%s/s), corpus %s files (%s bytes)\n' "$target" "$status" "${execs:-?}" "${rate:-?}" \
    "$(find "$dir/corpus" -type f | wc -l)" "$(du -sb "$dir/corpus" | cut -f1)" >"$dir/result"
}

targets=$(ls tests/fuzz/corpus)
echo "fuzzing $(wc -w <<<"$targets") targets for $seconds s each, two at a time"
for target in $targets; do
  # Two at a time: the machine's cores (CI has two).
  (($(jobs -rp | wc -l) < 2)) || wait -n || true
  fuzz_one "$target" &
done
wait

passed=0
failed=0
for target in $targets; do
  cat "$runs/$target/result" 2>/dev/null || echo "$target: FAILED (no result: see $runs/$target)"
  if grep -qs "^$target: ok," "$runs/$target/result"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    # CI keeps only what is printed: the end of the failing run's log.
    for log in "$runs/$target"/replay.log "$runs/$target"/run.log; do
      [[ ! -f $log ]] || { echo "--- the end of $log:"; tail -n 25 "$log"; }
    done
  fi
done
echo "$passed passed, $failed failed"
((failed == 0))
