#!/usr/bin/env bash
# Create (or reuse) the CPython 3.13 venv of pallas-fastagent and print its python.
#
#   certify/pallas-fastagent/setup.sh [VENV_DIR]
#
# VENV_DIR defaults to CARGO_TARGET_DIR (or target/)/pallas-fastagent/venv. The pinned set of
# requirements.txt (fast-agent-mcp 0.7.22 and every transitive dependency, prometheus_client) is
# installed with --no-deps; the pallas package itself runs from this folder (PYTHONPATH), so
# editing it needs no reinstall. Idempotent: when the venv already holds the requirements'
# hash, nothing is installed (well under a second). fast-agent-mcp 0.7.22 declares Python
# >= 3.13.5; pyenv has 3.13.0, on which it runs (--ignore-requires-python, as certify/fast-agent/).
# Environment: PYTHON (interpreter; default: certify/python/find-python.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=${1:-${CARGO_TARGET_DIR:-$here/../../target}/pallas-fastagent/venv}

. "$here/../python/find-python.sh"

stamp="$venv/.pallas-requirements.sha256"
want=$(sha256sum "$here/requirements.txt" | cut -d' ' -f1)
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "$venv/bin/python"
  exit 0
fi
if [ ! -x "$venv/bin/python" ]; then
  python=$(find_python)
  "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 13) else 1)' || {
    echo "error: $python is not Python >= 3.13 (seed 001: Requires Python >= 3.13)" >&2
    exit 1
  }
  mkdir -p "$(dirname "$venv")"
  "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --ignore-requires-python \
  -r "$here/requirements.txt" >&2
"$venv/bin/python" -c 'import fast_agent, prometheus_client, starlette, uvicorn, httpx, yaml' || {
  echo "error: the venv $venv lacks a requirement" >&2
  exit 1
}
echo "$want" > "$stamp"
echo "$venv/bin/python"
