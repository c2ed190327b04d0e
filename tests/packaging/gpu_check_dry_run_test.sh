#!/usr/bin/env bash
# scripts/gpu-check.sh --dry-run against the GPU machine's limits on what comes back (at most 8 files,
# 16 MiB each, no folders) and its own promises: three files (summary.md, summary.json and the logs'
# archive), the summary's first line saying how many CUDA tests ran, the phase table printed last,
# every phase in the archive; and with no time left, every phase listed as not run.
#   gpu_check_dry_run_test.sh SOURCE_DIR
set -euo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "gpu_check_dry_run_test: $*" >&2; exit 1; }

OUT=$tmp/out bash "$src/scripts/gpu-check.sh" --dry-run >"$tmp/stdout"
files=$(cd "$tmp/out" && find . -mindepth 1 | sort | tr '\n' ' ')
[[ $files == "./gpu-check-logs.tar.gz ./summary.json ./summary.md " ]] || fail "unexpected files in OUT: $files"
for f in "$tmp"/out/*; do
  (( $(stat -c %s "$f") <= 16 * 1024 * 1024 )) || fail "$f is over 16 MiB"
done
head -n 1 "$tmp/out/summary.md" | grep -q "NOTHING WAS TESTED ON A GPU (0 CUDA tests ran" || fail "first line: $(head -n 1 "$tmp/out/summary.md")"
tail -n 1 "$tmp/stdout" | grep -q '^| model-1b-shape | ok | [0-9]* |$' || fail "last line printed: $(tail -n 1 "$tmp/stdout")"
grep -q '"dry_run": true' "$tmp/out/summary.json" || fail "summary.json: $(cat "$tmp/out/summary.json")"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/out/summary.json" || fail "summary.json is no JSON"
archived=$(tar -tzf "$tmp/out/gpu-check-logs.tar.gz" | sort | tr '\n' ' ')
for log in devices test_cuda_ops test_cuda_attention test_cuda_forward test_cuda_element_math test_cuda_error_class \
           kernels kernels-json \
           write-smollm2-shape model-smollm2-shape model-smollm2-shape-no-graphs write-1b-shape model-1b-shape; do
  [[ $archived == *"./$log.log "* ]] || fail "$log.log is not in the archive: $archived"
done
grep -q "dry run: .*test_cuda_ops .*--gtest_output=json:.*test_cuda_ops\.gpu\.json" \
  <(tar -xzOf "$tmp/out/gpu-check-logs.tar.gz" ./test_cuda_ops.log) || fail "the conformance phase does not write its gtest JSON"
# The host-side programs need no device: their JSON is kept apart from the count of tests run on the GPU.
grep -q "dry run: .*test_cuda_element_math .*--gtest_output=json:.*test_cuda_element_math\.host\.json" \
  <(tar -xzOf "$tmp/out/gpu-check-logs.tar.gz" ./test_cuda_element_math.log) || fail "a host-side program's JSON is counted as the GPU's"

# No time left: nothing runs, every phase says so, and the files still come back.
GPU_CHECK_DEADLINE_S=0 OUT=$tmp/late bash "$src/scripts/gpu-check.sh" --dry-run >"$tmp/late.stdout"
[[ $(ls "$tmp/late" | wc -l) -eq 3 ]] || fail "a run past its deadline left: $(ls "$tmp/late")"
grep -q '^| devices | not run: past the deadline | 0 |$' "$tmp/late/summary.md" || fail "$(cat "$tmp/late/summary.md")"
! grep -q '| ok |' "$tmp/late/summary.md" || fail "a phase ran past the deadline"
echo "gpu_check_dry_run_test: ok"
