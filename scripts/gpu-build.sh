#!/usr/bin/env bash
# Builds what scripts/gpu-check.sh runs on a GPU machine that has no Qt, nlohmann-json, GoogleTest or
# network, for sm_90, and stages it in build-gpu/carry (with the working tree, under 64 MiB: the
# device tool's carry limit):
#   bin/  inferscope-cli, write-synthetic-model and the CUDA test programs, stripped
#   lib/  the shared libraries they load, but the C library's own (the loader, libc, libm, ...) and
#         cuBLAS (libcublas, libcublasLt: gpu-check.sh finds the device's CUDA toolkit's)
# Run here, then on the device: scripts/gpu-check.sh (it finds build-gpu/carry).
#   scripts/gpu-build.sh [extra CMake options ...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-gpu
carry=$build/carry
# The tests find their models relative to where they run (gpu-check.sh runs them from the repository
# root): the tree lies elsewhere on the device. STRING, so that CMake keeps the paths relative.
# sm_90: the H100 and H200 the device tool lends.
scripts/configure.sh "$build" -DCMAKE_BUILD_TYPE=Release -DINFERSCOPE_GUI=OFF -DINFERSCOPE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DINFERSCOPE_TEST_MODELS_DIR:STRING=tests/models \
  -DINFERSCOPE_DEMO_MODEL:STRING=models/SmolLM2-135M-Instruct.Q4_1.gguf "$@"
# The programs gpu-check.sh runs: the CLI, the synthetic-model writer and every test_cuda_* program.
mapfile -t cuda_tests < <(grep -oh 'test_cuda_[a-z_]*' tests/*/CMakeLists.txt | sort -u)
programs=(inferscope-cli write-synthetic-model "${cuda_tests[@]}")
cmake --build "$build" -j "$(nproc)" --target "${programs[@]}"

rm -rf "$carry"
mkdir -p "$carry/bin" "$carry/lib"
for p in "${programs[@]}"; do
  path=$(find "$build" -path "$build/carry" -prune -o -type f -name "$p" -perm -u+x -print | head -n 1)
  [[ -n $path ]] || { echo "gpu-build: $p was not built" >&2; exit 1; }
  strip -o "$carry/bin/$p" "$path"
  chmod +x "$carry/bin/$p"
done
# Every library the programs load, but glibc's (the device's own must serve: a newer one cannot be carried)
# and cuBLAS's (hundreds of MiB, over the carry limit: gpu-check.sh loads the device toolkit's).
ldd "$carry"/bin/* | awk '$3 ~ /^\// {print $3}' | sort -u | while read -r lib; do
  case $(basename "$lib") in
    ld-linux*|libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|libresolv.so*|libcuda.so*|libcublas*) ;;
    *) cp -L "$lib" "$carry/lib/" ;;
  esac
done
# What travels is the carry and the working tree beside it (tracked files and untracked ones git does
# not ignore): 64 MiB in all.
carry_bytes=$(du -sb "$carry" | cut -f1)
tree_bytes=$({ git ls-files -z; git ls-files -z --others --exclude-standard; } | du --files0-from=- -cb 2>/dev/null | tail -n 1 | cut -f1)
size=$(( (carry_bytes + tree_bytes) / (1 << 20) ))
echo "gpu-build: $carry holds $((carry_bytes >> 20)) MiB and the tree $((tree_bytes >> 20)) MiB: ${size} MiB travel (the device tool carries at most 64 MiB)"
(( size < 64 )) || { echo "gpu-build: too large to carry" >&2; exit 1; }
