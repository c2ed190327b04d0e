#!/usr/bin/env bash
# The instruction-set builds (*_avx2.cpp, *_avx512vl.cpp) must define no weak (COMDAT) symbol: the
# linker keeps one copy of an inline function or template instance whatever flags each object was
# compiled with, so an AVX-512 copy could end up serving the AVX2 or scalar code (SIGILL on a CPU
# without it). Their helpers are static or in an unnamed namespace; this holds them to it.
#   simd_objects_share_no_code.sh LIBRARY.a [LIBRARY.a ...]
set -euo pipefail
status=0 checked=0
for lib in "$@"; do
  [[ -f $lib ]] || { echo "no library $lib"; exit 1; }
  members=$(ar t "$lib" | grep -cE '_(avx2|avx512vl|avx512vnni)\.cpp\.o$' || true)
  checked=$((checked + members))
  # nm -A: "LIBRARY:MEMBER:VALUE TYPE NAME"; weak types are W, V and u (DW.ref.__gxx_personality_v0,
  # a pointer to the one C++ personality routine that sanitizer builds emit, is data, the same everywhere)
  weak=$(nm -A -C --defined-only "$lib" | awk '$1 ~ /_(avx2|avx512vl|avx512vnni)\.cpp\.o:/ && $2 ~ /^[WVu]$/ && $3 !~ /^DW\.ref\./' || true)
  if [[ -n $weak ]]; then
    echo "weak symbols in instruction-set objects of $lib:"
    echo "$weak"
    status=1
  fi
done
echo "$checked instruction-set objects checked"
((checked > 0)) || { echo "no *_avx2.cpp.o or *_avx512vl.cpp.o member found"; exit 1; }
exit $status
