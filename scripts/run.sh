#!/usr/bin/env bash
# Installs what is missing, builds, and starts Inferscope on the demo model.
# Until the workbench window lands, this is the terminal chat of inferscope-cli.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)" --target inferscope-cli
exec build/core/cli/inferscope-cli chat --model models/SmolLM2-135M-Instruct.Q4_1.gguf "$@"
