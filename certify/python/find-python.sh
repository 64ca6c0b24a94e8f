# Sourced by the certification setup scripts: `find_python` prints a CPython 3.13 interpreter.
# Order: $PYTHON when set; pyenv's 3.13 installs (`pyenv root`, else ~/.pyenv); python3.13 on PATH.
# Exits with a message naming PYTHON when none is found.
find_python() {
  if [ -n "${PYTHON:-}" ]; then echo "$PYTHON"; return; fi
  local root p
  root=$(pyenv root 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}")
  for p in "$root"/versions/3.13*/bin/python3.13 "$(command -v python3.13 2>/dev/null || true)"; do
    if [ -n "$p" ] && [ -x "$p" ]; then echo "$p"; return; fi
  done
  echo "error: no CPython 3.13 found (set PYTHON=/path/to/python3.13)" >&2
  exit 1
}
