#!/usr/bin/env bash
# Interop test: the official openai, anthropic and mcp Python SDKs against `pallas-mocks up`.
# Usage: PALLAS_MOCKS_BIN=target/debug/pallas-mocks mocks/interop/run.sh
# Creates (or reuses) a venv with python3.11 in ${INTEROP_VENV:-mocks/interop/.venv}.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
: "${PALLAS_MOCKS_BIN:?set PALLAS_MOCKS_BIN to a built pallas-mocks binary}"
PALLAS_MOCKS_BIN="$(cd "$(dirname "$PALLAS_MOCKS_BIN")" && pwd)/$(basename "$PALLAS_MOCKS_BIN")"
export PALLAS_MOCKS_BIN
python="$(command -v python3.11 || command -v python3)"
venv="${INTEROP_VENV:-$here/.venv}"
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
cd "$here"
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider test_interop.py "$@"
