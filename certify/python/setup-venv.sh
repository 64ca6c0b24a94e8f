#!/usr/bin/env bash
# Create (or reuse) a CPython 3.13 venv holding exactly the pinned set of REQUIREMENTS.
#
#   certify/python/setup-venv.sh REQUIREMENTS VENV_DIR
#
# REQUIREMENTS is a fully pinned, transitive list (pip freeze), e.g. certify/agno/requirements.txt.
# Idempotent: a copy of the requirements file is kept in the venv; when it matches, nothing is
# installed. Environment: PYTHON (interpreter; default: certify/python/find-python.sh).
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 REQUIREMENTS VENV_DIR" >&2; exit 2; }
req=$1
venv=$2
[ -f "$req" ] || { echo "error: no requirements file $req" >&2; exit 2; }

. "$(dirname "$0")/find-python.sh"

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
