#!/usr/bin/env bash
# Create (or reuse) a Python 3.13 venv holding fast-agent-mcp VERSION and print the fast-agent path.
#
#   certify/fast-agent/setup.sh VERSION VENV_DIR
#
# VERSION is an exact release (e.g. 0.7.22) or `latest`. When
# certify/fast-agent/requirements-VERSION.txt exists, the whole transitive set is installed
# from it (reproducible CI); otherwise pip resolves the dependencies. `latest` is the newest
# release certified (requirements-latest.txt); FAST_AGENT_NEWEST=1 installs the newest on PyPI
# instead (then refreeze the lock with `pip freeze`).
# Idempotent: when VENV_DIR already holds the requested version, nothing is installed.
# Environment: PYTHON (interpreter to use; default: certify/python/find-python.sh).
set -euo pipefail

usage() { echo "usage: $0 VERSION|latest VENV_DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
version=$1
venv=$2
here=$(cd "$(dirname "$0")" && pwd)

. "$here/../python/find-python.sh"

installed_version() {
  [ -x "$venv/bin/python" ] || return 0
  "$venv/bin/python" - <<'PY' 2>/dev/null || true
import importlib.metadata as m
try:
    print(m.version("fast-agent-mcp"))
except m.PackageNotFoundError:
    pass
PY
}

# The venv must run Python >= 3.13: older interpreters make pip pick an ancient 0.2.x release.
check_python() {
  "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 13) else 1)' || {
    echo "error: $1 is $("$1" --version 2>&1); fast-agent needs Python >= 3.13" >&2
    exit 1
  }
}

if [ ! -x "$venv/bin/python" ]; then
  python=$(find_python)
  check_python "$python"
  "$python" -m venv "$venv"
fi
check_python "$venv/bin/python"

current=$(installed_version)
pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check --ignore-requires-python)

lock="$here/requirements-$version.txt"
if [ "$version" = latest ] && [ -f "$lock" ] && [ -z "${FAST_AGENT_NEWEST:-}" ]; then
  # `latest` is the newest release certified, pinned by its lock, so that CI re-makes the same
  # verdicts whatever PyPI offers today; FAST_AGENT_NEWEST=1 moves to the newest on the index.
  pinned=$(sed -n 's/^fast-agent-mcp==//p' "$lock")
  if [ "$current" != "$pinned" ]; then
    "${pip[@]}" --no-deps -r "$lock"
  fi
elif [ "$version" = latest ]; then
  # Skip when the installed version is already the newest one the index offers.
  newest=$("$venv/bin/python" -m pip index versions fast-agent-mcp --ignore-requires-python 2>/dev/null \
    | sed -n 's/^fast-agent-mcp (\([^)]*\)).*/\1/p' || true)
  if [ -z "$current" ] || [ -z "$newest" ] || [ "$current" != "$newest" ]; then
    "${pip[@]}" --upgrade fast-agent-mcp
  fi
elif [ "$current" != "$version" ]; then
  if [ -f "$lock" ]; then
    "${pip[@]}" --no-deps -r "$lock"
  else
    "${pip[@]}" "fast-agent-mcp==$version"
  fi
fi

got=$(installed_version)
if [ "$version" != latest ] && [ "$got" != "$version" ]; then
  echo "error: expected fast-agent-mcp $version in $venv, found '${got:-none}'" >&2
  exit 1
fi
[ -x "$venv/bin/fast-agent" ] || { echo "error: $venv/bin/fast-agent missing" >&2; exit 1; }
echo "$venv/bin/fast-agent"
