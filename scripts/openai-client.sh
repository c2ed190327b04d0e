#!/usr/bin/env bash
# Prints the python of a virtual environment holding the official OpenAI Python SDK (PyPI, pinned),
# made in build/openai-venv (or DIR) the first time and reused after: the local server's client
# tests (tests/e2e/openai_sdk_test.py) talk to inferscope-cli serve through it.
#   scripts/openai-client.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:-build/openai-venv}
version=3.63.0
python=$venv/bin/python
if ! [[ -x $python ]] || [[ $("$python" -c 'import openai; print(openai.__version__)' 2>/dev/null) != "$version" ]]; then
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check "openai==$version" >&2
fi
echo "$(cd "$(dirname "$python")" && pwd)/python"
