#!/usr/bin/env bash
# Configures a build folder with CMake: a new folder gets Ninja (ninja-build, installed by setup.sh);
# an existing one keeps the generator it was made with (CMake refuses a change).
#   scripts/configure.sh BUILD_DIR [CMake options ...]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$1
shift
generator=()
[[ -f $dir/CMakeCache.txt ]] || generator=(-G Ninja)
cmake -S . -B "$dir" "${generator[@]}" "$@" >/dev/null
