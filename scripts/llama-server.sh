#!/usr/bin/env bash
# Prints the path of llama.cpp's llama-server (CPU), built by scripts/llama-cpp.sh from the same
# pinned llama-cpp-python sdist into its cache folder (reused when present). The remote-engine tests
# start it on 127.0.0.1 with the demo model. --avx512 picks llama-cpp.sh's AVX-512 build.
#   scripts/llama-server.sh [--avx512]
set -euo pipefail
cd "$(dirname "$0")/.."
server=$(scripts/llama-cpp.sh "$@")/bin/llama-server
[[ -x $server ]] || { echo "llama-server: $server was not built" >&2; exit 1; }
echo "$server"
