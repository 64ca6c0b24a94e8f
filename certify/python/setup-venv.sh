#!/usr/bin/env bash
# Create (or reuse) a CPython 3.13 venv holding exactly the pinned set of REQUIREMENTS.
#
#   certify/python/setup-venv.sh REQUIREMENTS VENV_DIR
#
# REQUIREMENTS is a fully pinned, transitive list (pip freeze), e.g. certify/agno/requirements.txt.
# Idempotent: a copy of the requirements file is kept in the venv; when it matches, nothing is
# installed. Environment: PYTHON (interpreter; default: pyenv's CPython 3.13.0, else python3.13).
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 REQUIREMENTS VENV_DIR" >&2; exit 2; }
req=$1
venv=$2
[ -f "$req" ] || { echo "error: no requirements file $req" >&2; exit 2; }

find_python() {
  if [ -n "${PYTHON:-}" ]; then echo "$PYTHON"; return; fi
  local p
  export PYENV_VERSION=${PYENV_VERSION:-3.13.0}
  for p in "${PYENV_ROOT:-$HOME/.pyenv}/versions/3.13.0/bin/python3.13" \
           "$(command -v python3.13 2>/dev/null || true)"; do
    if [ -n "$p" ] && [ -x "$p" ]; then echo "$p"; return; fi
  done
  echo "error: no CPython 3.13 found (set PYTHON=/path/to/python3.13)" >&2
  exit 1
}

if [ ! -x "$venv/bin/python" ]; then
  mkdir -p "$(dirname "$venv")"
  "$(find_python)" -m venv "$venv"
fi
"$venv/bin/python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 13) else 1)' || {
  echo "error: $venv runs $("$venv/bin/python" --version 2>&1); Python >= 3.13 is needed" >&2
  exit 1
}
if ! cmp -s "$req" "$venv/pinned-requirements.txt"; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -r "$req"
  "$venv/bin/python" -m pip check >/dev/null || {
    echo "error: the pinned set of $req is inconsistent:" >&2
    "$venv/bin/python" -m pip check >&2 || true
    exit 1
  }
  cp "$req" "$venv/pinned-requirements.txt"
fi
echo "$venv"
