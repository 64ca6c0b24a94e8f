#!/usr/bin/env bash
# Create (or reuse) the CPython 3.13 venv of the pinned set certify/beeai/requirements.txt and print
# its path. Idempotent (nothing is installed when the venv already holds that set).
#
#   certify/beeai/setup.sh [VENV_DIR]     (default: ${CARGO_TARGET_DIR:-target}/beeai/venv)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../python/setup-venv.sh" "$here/requirements.txt" "${1:-${CARGO_TARGET_DIR:-target}/beeai/venv}"
