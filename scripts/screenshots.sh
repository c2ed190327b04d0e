#!/usr/bin/env bash
# Makes the screenshots of README.md and docs/ again, at 1280x720, by running the scripted demos
# (resources/demo/*.json; gui/app/demo_script.h documents their steps) in a virtual display:
# the workbench, Compare (local and simulated), speculation, every Learn experiment on the demo
# model; the workbench serving the demo model while curl streams from it; the Model tab on Gemma 3 270M when models/gemma-3-270m-q4_k_m.gguf is there; and the
# workbench on a llama-server (the demo model, 4 slots) from scripts/llama-server.sh (which builds
# llama.cpp first when its cache has none).
# Sessions and settings go to a scratch folder, so nothing of the user's shapes the pictures.
#   scripts/screenshots.sh            (after scripts/test.sh or a build in build/)
set -euo pipefail
cd "$(dirname "$0")/.."
app=${INFERSCOPE_APP:-build/gui/inferscope}
[[ -x $app ]] || { echo "screenshots: $app is not built (run scripts/test.sh first)" >&2; exit 1; }
scratch=$(mktemp -d)
trap 'kill "${server_pid:-}" 2>/dev/null || true; rm -rf "$scratch"' EXIT
export XDG_CONFIG_HOME=$scratch/config XDG_DATA_HOME=$scratch/data

# The last picture of each demo is taken by --screenshot; the others by its own steps.
shot() {
  echo "screenshots: $2 -> $1"
  xvfb-run -a -s "-screen 0 1280x720x24" "$app" --sessions-dir "$scratch/sessions-$(basename "$2" .json)" \
    --screenshot "$1" --demo-script "$2" "${@:3}"
}
shot docs/screenshots/welcome.png resources/demo/welcome-demo.json
shot docs/screenshots/workbench.png resources/demo/readme-demo.json
shot "$scratch/compare-simulated-end.png" resources/demo/compare-simulated-demo.json
shot docs/screenshots/speculative.png resources/demo/speculative-demo.json
shot "$scratch/learn-end.png" resources/demo/learn-demo.json
# A client for the serving demo: once the Serve switch listens on 18081, curl streams a long story.
(for _ in $(seq 600); do curl -sf http://127.0.0.1:18081/health > /dev/null && break; sleep 0.1; done
 curl -sN http://127.0.0.1:18081/v1/chat/completions -H 'Content-Type: application/json' \
   -d '{"messages": [{"role": "user", "content": "Tell me a long story about a dragon."}], "max_tokens": 600, "ignore_eos": true, "stream": true}' \
   > /dev/null || true) &
shot docs/screenshots/serving.png resources/demo/serving-demo.json
if [[ -f models/gemma-3-270m-q4_k_m.gguf ]]; then
  shot "$scratch/gemma-end.png" resources/demo/gemma3-model-demo.json
else
  echo "screenshots: no models/gemma-3-270m-q4_k_m.gguf: docs/screenshots/model-gemma3.png is left as it is"
fi
if server=$(scripts/llama-server.sh 2>/dev/null); then
  "$server" -m models/SmolLM2-135M-Instruct.Q4_1.gguf --host 127.0.0.1 --port 18080 -np 4 -c 4096 --metrics \
    > "$scratch/llama-server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 120); do curl -sf http://127.0.0.1:18080/health > /dev/null && break; sleep 0.5; done
  shot docs/screenshots/remote-llama-server.png resources/demo/remote-llama-server-demo.json
else
  echo "screenshots: no llama-server (scripts/llama-server.sh): docs/screenshots/remote-llama-server.png is left as it is"
fi
