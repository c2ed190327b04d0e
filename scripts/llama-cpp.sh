#!/usr/bin/env bash
# Builds llama.cpp's tools (llama-tokenize, llama-perplexity, llama-quantize, llama-bench,
# llama-server) and its library from the llama.cpp sources vendored in PyPI's llama-cpp-python sdist, into a cache folder
# outside the source tree, reused when present. Tests that compare with llama.cpp and the
# PERFORMANCE.md measurements use it; nothing of it is committed.
#   scripts/llama-cpp.sh           prints the folder holding bin/ and lib/ (builds it first if needed)
#   scripts/llama-cpp.sh --avx512  the same with AVX-512 (F, BW, DQ, VL, VBMI, VNNI, BF16) kernels too,
#                                  for comparisons on a CPU whose AVX-512 our kernels use (not for tests)
# The folder: $INFERSCOPE_CACHE (default ~/.cache/inferscope)/llama.cpp-$VERSION-avx2 (or -avx512).
set -euo pipefail
VERSION=0.3.36
isa=avx2
case ${1:-} in
  "") ;;
  --avx512) isa=avx512 ;;
  *) echo "llama-cpp: unknown option '$1' (the only one is --avx512)" >&2; exit 2 ;;
esac
cache=${INFERSCOPE_CACHE:-$HOME/.cache/inferscope}
prefix=$cache/llama.cpp-$VERSION-$isa
tools=(llama-tokenize llama-perplexity llama-quantize llama-bench llama-server)

built() {
  for t in "${tools[@]}"; do [[ -x $prefix/bin/$t ]] || return 1; done
  [[ -f $prefix/include/llama.h ]] && compgen -G "$prefix/lib/libllama.so*" >/dev/null
}

if ! built; then
  echo "llama-cpp: building llama.cpp from llama-cpp-python==$VERSION (PyPI sdist) into $prefix" >&2
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  python3 -m pip download --quiet --no-deps --no-binary :all: --disable-pip-version-check \
    "llama-cpp-python==$VERSION" -d "$work" >&2
  tar -xzf "$work"/llama_cpp_python-"$VERSION".tar.gz -C "$work"
  src=$work/llama_cpp_python-$VERSION/vendor/llama.cpp
  [[ -f $src/CMakeLists.txt ]] || { echo "llama-cpp: no vendor/llama.cpp in the sdist" >&2; exit 1; }
  # The CPU backend with the instruction set our kernels use (AVX2, FMA, F16C): comparisons are like
  # for like, and the binaries run on every machine of this kind (a -march=native build picked up
  # AMX on a Xeon whose kernel does not enable it: SIGILL). No network client; each binary and
  # library finds the libraries beside it or in ../lib, where they are copied. llama-server is built
  # without its web UI (no npm, no download): the tests use its HTTP API only.
  # The AVX-512 variant names its extensions one by one, for the same reason.
  avx512=(-DGGML_AVX512=OFF)
  [[ $isa == avx512 ]] && avx512=(-DGGML_AVX512=ON -DGGML_AVX512_VBMI=ON -DGGML_AVX512_VNNI=ON -DGGML_AVX512_BF16=ON)
  cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DGGML_AVX=ON \
    -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON "${avx512[@]}" -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF \
    -DGGML_AMX_BF16=OFF -DLLAMA_CURL=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_UI=OFF \
    -DLLAMA_USE_PREBUILT_UI=OFF -DBUILD_SHARED_LIBS=ON \
    -DCMAKE_BUILD_RPATH='$ORIGIN:$ORIGIN/../lib' >&2
  cmake --build "$work/build" -j "$(nproc)" --target llama "${tools[@]}" >&2
  rm -rf "$prefix.tmp"
  mkdir -p "$prefix.tmp/bin" "$prefix.tmp/lib" "$prefix.tmp/include"
  for t in "${tools[@]}"; do cp "$work/build/bin/$t" "$prefix.tmp/bin/"; done
  find "$work/build" -name 'lib*.so*' -exec cp -P {} "$prefix.tmp/lib/" \;
  cp "$src"/include/llama.h "$src"/ggml/include/*.h "$prefix.tmp/include/"
  # Whole or nothing: a build cut short leaves no folder that looks ready.
  rm -rf "$prefix"
  mv "$prefix.tmp" "$prefix"
fi
echo "$prefix"
