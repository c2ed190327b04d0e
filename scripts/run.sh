#!/usr/bin/env bash
# Installs what is missing, builds, and starts the Inferscope workbench on the demo model.
# Without a display ($DISPLAY and $WAYLAND_DISPLAY unset) it starts the terminal chat instead.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/configure.sh build -DCMAKE_BUILD_TYPE=Release
model=models/SmolLM2-135M-Instruct.Q4_1.gguf
if [[ -z ${DISPLAY:-} && -z ${WAYLAND_DISPLAY:-} ]]; then
  echo "run: no display (DISPLAY and WAYLAND_DISPLAY are unset): starting the terminal chat instead of the window." >&2
  echo "run: for the window, run under a desktop session, ssh -X, or: xvfb-run -a build/gui/inferscope" >&2
  cmake --build build -j "$(nproc)" --target inferscope-cli
  exec build/core/cli/inferscope-cli chat --model "$model" "$@"
fi
cmake --build build -j "$(nproc)" --target inferscope
exec build/gui/inferscope --model "$model" "$@"
