#!/usr/bin/env bash
# Sets up, configures, builds and runs every test.
#   scripts/test.sh            Release build in build/
#   scripts/test.sh --asan     ASan + UBSan build in build-asan/
#   scripts/test.sh --tsan     TSan build in build-tsan/, without the GUI: Debian's Qt is not built
#                              with TSan and locks with raw futexes, which TSan cannot see, so
#                              queued signals show up as false races (the GUI runs under ASan)
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
flags=(-DCMAKE_BUILD_TYPE=Release)
case "${1:-}" in
  "") ;;
  --asan) build=build-asan; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DINFERSCOPE_SANITIZE=address) ;;
  --tsan) build=build-tsan; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DINFERSCOPE_SANITIZE=thread -DINFERSCOPE_GUI=OFF) ;;
  *) echo "usage: scripts/test.sh [--asan|--tsan]" >&2; exit 2 ;;
esac
scripts/setup.sh
jobs=$(nproc)
cmake -S . -B "$build" "${flags[@]}" >/dev/null
cmake --build "$build" -j "$jobs"
cd "$build" && ctest --output-on-failure -j "$jobs"
