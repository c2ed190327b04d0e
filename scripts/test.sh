#!/usr/bin/env bash
# Sets up, configures, builds and runs every test.
#   scripts/test.sh            Release build in build/, every test, with llama.cpp built (once, into a
#                              cache folder: scripts/llama-cpp.sh) for the tests that compare with it
#                              and its llama-server for the remote-engine tests (scripts/llama-server.sh)
#   scripts/test.sh --asan     ASan + UBSan build in build-asan/, all but the tests labelled slow or
#                              compute-bound (the exactness sweeps: minutes of ASan's slower kernels
#                              over code every other test runs too)
#   scripts/test.sh --tsan     TSan build in build-tsan/ of the test executables labelled `threads`
#                              (the target threaded_tests: the thread pool, the engine thread, the
#                              background weight conversion, the HTTP clients and servers), all their
#                              tests but those labelled slow or compute-bound (their kernels run 20-50x
#                              slower under TSan). Without the GUI: Debian's Qt is not built with TSan
#                              and locks with raw futexes, which TSan cannot see, so queued signals show
#                              up as false races (the GUI runs under ASan)
# On a machine without a CUDA device the sanitizer builds leave the CUDA code out (none of it could
# run; the Release build still compiles it). After ctest's summary it lists the skipped tests with
# their reasons (scripts/skipped-tests.sh); its exit code is ctest's.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
flags=(-DCMAKE_BUILD_TYPE=Release)
select_tests=()
targets=(all)
# Sanitizer builds compile at -O1 (the sanitizers' own advice; under UBSan it halves the compile time
# of -O2) with line tables only (-g1): reports still name file and line.
sanitizer_build_flags=("-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG")
case "${1:-}" in
  "") ;;
  --asan) build=build-asan; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DINFERSCOPE_SANITIZE=address "${sanitizer_build_flags[@]}"); select_tests=(-LE "slow|compute-bound") ;;
  --tsan) build=build-tsan; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DINFERSCOPE_SANITIZE=thread -DINFERSCOPE_GUI=OFF "${sanitizer_build_flags[@]}"); select_tests=(-L threads -LE "slow|compute-bound"); targets=(threaded_tests) ;;
  *) echo "usage: scripts/test.sh [--asan|--tsan]" >&2; exit 2 ;;
esac
scripts/setup.sh --tests
if [[ -n ${1:-} ]] && ! { command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; }; then
  flags+=(-DINFERSCOPE_CUDA=OFF)
fi
# The Release pass runs the slow tests, among them the comparisons with llama.cpp.
if [[ -z ${1:-} ]]; then
  llama_cpp=$(scripts/llama-cpp.sh)
  scripts/llama-server.sh >/dev/null  # the remote-engine tests' server: its absence fails the run here
  flags+=("-DINFERSCOPE_LLAMA_CPP=$llama_cpp" "-DINFERSCOPE_OPENAI_PYTHON=$(scripts/openai-client.sh)")
fi
jobs=$(nproc)
scripts/configure.sh "$build" "${flags[@]}"
cmake --build "$build" -j "$jobs" --target "${targets[@]}"
cd "$build"
status=0
ctest --output-on-failure -j "$jobs" "${select_tests[@]}" || status=$?
../scripts/skipped-tests.sh Testing/Temporary/LastTest.log
exit "$status"
