#!/usr/bin/env bash
# Serve example/ (seed 001's project layout) against the kit's mock ecosystem, in one command:
#
#   certify/pallas-fastagent/run-example.sh
#
# Creates the venv if needed (setup.sh), starts `pallas-mocks up mocks/examples/ecosystem.yaml`,
# exports the mock URLs the example's fastagent.config.yaml reads (${ARGOS_URL}, …), and runs
# `python -m pallas.server` in example/ (registry on :8200, jarvis on :8201, research on :8250).
# Ctrl-C stops both. Logs: PALLAS_LOG_FILE (default here: example/pallas.log).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
python=$("$here/setup.sh")
work=$(mktemp -d)
cd "$root"
cargo build -q -p pallas-mocks
target_dir=${CARGO_TARGET_DIR:-$root/target}
"$target_dir/debug/pallas-mocks" up mocks/examples/ecosystem.yaml --urls-out "$work/urls.json" &
mocks=$!
trap 'kill "$mocks" 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 1 100); do [ -s "$work/urls.json" ] && break; sleep 0.1; done
eval "$("$python" - "$work/urls.json" <<'PY'
import json, shlex, sys
urls = json.load(open(sys.argv[1]))
for name in ("argos", "neo4j", "mnemosyne"):
    print(f"export {name.upper()}_URL={shlex.quote(urls[name])}")
print(f"export OPENAI_BASE_URL={shlex.quote(urls['openai'])}")
PY
)"
cd "$here/example"
export PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" PALLAS_LOG_FILE=${PALLAS_LOG_FILE:-$here/example/pallas.log}
"$python" -m pallas.server "$@"
