#!/usr/bin/env bash
# Start a scripted fake LLM, a fake downstream MCP server and `fast-agent serve` (all on
# ephemeral loopback ports), wait for readiness, run probe.sh, save every log, stop everything.
#
#   certify/fast-agent/gather.sh VENV_DIR OUTDIR [SCOPE]
#
# VENV_DIR: a venv made by setup.sh. OUTDIR: where the run directory, captures and logs go
# (created; previous content of OUTDIR/probes is replaced). SCOPE: shared (default) |
# connection | request, passed as --instance-scope.
# Environment: FAKE_MCP_PYTHON — interpreter with the `mcp` 1.x package for fake_mcp.py
# (default: VENV_DIR/bin/python when it has mcp 1.x; the 0.7.22 venv does, the 0.10.x one
# does not). READY_TIMEOUT — seconds to wait for readiness (default 90). LLM_TOOL / LLM_ARGS —
# the downstream tool the scripted model calls and its JSON arguments (default: echo {"text": "hi"}).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 VENV_DIR OUTDIR [shared|connection|request]" >&2; exit 2; }
venv=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
scope=${3:-shared}
here=$(cd "$(dirname "$0")" && pwd)
fa="$venv/bin/fast-agent"
ready_timeout=${READY_TIMEOUT:-90}
[ -x "$fa" ] || { echo "error: $fa not found (run setup.sh first)" >&2; exit 1; }

fake_mcp_python=${FAKE_MCP_PYTHON:-$venv/bin/python}
"$fake_mcp_python" -c 'import mcp.server.fastmcp' 2>/dev/null || {
  echo "error: $fake_mcp_python lacks mcp 1.x (mcp.server.fastmcp); set FAKE_MCP_PYTHON to the 0.7.22 venv's python" >&2
  exit 1
}

run="$out/run"
rm -rf "$run" "$out/probes"
mkdir -p "$run/cards" "$run/home"
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
}
trap cleanup EXIT

# wait_file PATH PID: until PATH is non-empty, the process died, or 30 s passed.
wait_file() {
  local deadline=$((SECONDS + 30))
  until [ -s "$1" ]; do
    kill -0 "$2" 2>/dev/null || { echo "error: process for $1 exited" >&2; return 1; }
    [ $SECONDS -lt $deadline ] || { echo "error: timeout waiting for $1" >&2; return 1; }
    sleep 0.1
  done
}

default_args='{"text": "hi"}'
llm_args=${LLM_ARGS:-$default_args}
"$fake_mcp_python" "$here/fake_mcp.py" --log "$run/downstream-requests.jsonl" \
  --url-file "$run/mcp.url" > "$run/fake_mcp.log" 2>&1 &
pids+=($!); wait_file "$run/mcp.url" "${pids[-1]}"
python3 "$here/fake_llm.py" --log "$run/llm-requests.jsonl" --url-file "$run/llm.url" \
  --tool "${LLM_TOOL:-echo}" --args "$llm_args" > "$run/fake_llm.log" 2>&1 &
pids+=($!); wait_file "$run/llm.url" "${pids[-1]}"

cat > "$run/cards/helper.md" <<'EOF'
---
name: helper
description: A helper agent for certification
model: generic.fake-model
servers:
  - downstream
---
You are a helper. Use the tools.
EOF
cat > "$run/fastagent.config.yaml" <<EOF
default_model: generic.fake-model
generic:
  api_key: sk-fake-llm-key
  base_url: $(cat "$run/llm.url")
mcp:
  servers:
    downstream:
      transport: http
      url: $(cat "$run/mcp.url")
EOF

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
version=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("fast-agent-mcp"))')
# 0.10+ has --home (global and on serve); 0.7.x has a serve-level --env for the same purpose.
if "$venv/bin/python" -c 'import sys; from packaging.version import Version as V; sys.exit(V(sys.argv[1]) < V("0.10"))' "$version"; then
  cmd=("$fa" --no-update-check serve --home "$run/home")
else
  cmd=("$fa" --no-update-check serve --env "$run/home")
fi
cmd+=(--agent-cards "$run/cards" --config-path "$run/fastagent.config.yaml" --transport http
  --host 127.0.0.1 --port "$port" --instance-scope "$scope")
printf '%q ' "${cmd[@]}" > "$run/command.txt"; echo >> "$run/command.txt"

start=$(date +%s%N)
(cd "$run" && FASTMCP_CHECK_FOR_UPDATES=off exec "${cmd[@]}") > "$run/serve.stdout" 2> "$run/serve.stderr" &
pids+=($!)
fa_pid=${pids[-1]}
base="http://127.0.0.1:$port"
deadline=$((SECONDS + ready_timeout))
until [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$base/" || true)" = 200 ]; do
  kill -0 "$fa_pid" 2>/dev/null || { echo "error: fast-agent exited; see $run/serve.stderr" >&2; exit 1; }
  [ $SECONDS -lt $deadline ] || { echo "error: not ready after ${ready_timeout}s" >&2; exit 1; }
  sleep 0.05
done
ready_ms=$((($(date +%s%N) - start) / 1000000))
printf 'version=%s\nscope=%s\nready_ms=%s\nbase=%s\n' "$version" "$scope" "$ready_ms" "$base" | tee "$out/summary.txt"

"$here/probe.sh" "$base" helper "$out/probes"
cleanup
trap - EXIT
# The secrets used in this run must not appear in anything fast-agent wrote.
if grep -rl -e 'sk-fake-llm-key' -e 'probe-secret-token' "$run"/serve.* "$run/home" 2>/dev/null; then
  echo "warning: a secret appears in the files listed above" | tee -a "$out/summary.txt"
else
  echo "secrets_in_logs=none" | tee -a "$out/summary.txt"
fi
