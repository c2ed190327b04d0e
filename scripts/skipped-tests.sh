#!/usr/bin/env bash
# Prints "skipped: N" and one line per test ctest marked Skipped, with its GTEST_SKIP reason, read from
# a ctest log (default: Testing/Temporary/LastTest.log under the current directory).
#   scripts/skipped-tests.sh [LOG]
set -euo pipefail
log=${1:-Testing/Temporary/LastTest.log}
if [[ ! -f $log ]]; then
  echo "skipped: unknown (no $log)"
  exit 0
fi
# Each test's block opens with "i/n Testing: NAME"; gtest writes "FILE:LINE: Skipped", the reason's
# lines, then "[  SKIPPED ] NAME (..)".
awk '
  /^[0-9]+\/[0-9]+ Testing: / { test = substr($0, index($0, "Testing: ") + 9); in_reason = 0; next }
  /:[0-9]+: Skipped$/ { in_reason = 1; reason = ""; next }
  in_reason && /^\[  SKIPPED \] / {
    skipped[++n] = "  " test ": " (reason == "" ? "(GTEST_SKIP gave no reason)" : reason)
    in_reason = 0
    next
  }
  in_reason && NF { reason = reason (reason == "" ? "" : " ") $0 }
  END {
    print "skipped: " n + 0
    for (i = 1; i <= n; ++i) print skipped[i]
  }
' "$log"
