#!/usr/bin/env bash
# Writes docs/CLI.md's options reference again from inferscope-cli's --help (packaging/help_to_markdown.py),
# after a change to a command's options or help. Uses the Release build in build/ (scripts/test.sh makes it).
set -euo pipefail
cd "$(dirname "$0")/.."
cli=${1:-build/core/cli/inferscope-cli}
[[ -x $cli ]] || { echo "no $cli: build first (scripts/test.sh, or cmake --build build)" >&2; exit 1; }
PYTHONDONTWRITEBYTECODE=1 python3 packaging/help_to_markdown.py --program "$cli" --doc docs/CLI.md
