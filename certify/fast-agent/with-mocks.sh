#!/usr/bin/env bash
# Drive fast-agent `serve` with the kit's own mocks: pallas-mocks' OpenAI-dialect mock LLM and
# two mock MCP servers (mocks-ecosystem.yaml), then save two raw tools/call exchanges.
#
#   certify/fast-agent/with-mocks.sh VENV_DIR PALLAS_MOCKS_BIN OUTDIR
#
# The model is told in-band (`CALL_TOOL argos__search_web {...}`) which downstream tool to call.
# argos reports 3 progress steps; mnemosyne requires `Authorization: Bearer dev-token`, given as a
# static header in fastagent.config.yaml, and echoes the headers it received.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 VENV_DIR PALLAS_MOCKS_BIN OUTDIR" >&2; exit 2; }
venv=$(cd "$1" && pwd)
mocks_bin=$2
mkdir -p "$3"
out=$(cd "$3" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
fa="$venv/bin/fast-agent"
ready_timeout=${READY_TIMEOUT:-90}
[ -x "$fa" ] || { echo "error: $fa not found (run setup.sh first)" >&2; exit 1; }
[ -x "$mocks_bin" ] || { echo "error: $mocks_bin is not an executable pallas-mocks" >&2; exit 1; }

rm -rf "$out/run" "$out"/[0-9][0-9]-*.txt
run="$out/run"
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

"$mocks_bin" up "$here/mocks-ecosystem.yaml" --urls-out "$run/urls.json" > "$run/mocks.log" 2>&1 &
pids+=($!)
deadline=$((SECONDS + 30))
until [ -s "$run/urls.json" ]; do
  kill -0 "${pids[0]}" 2>/dev/null || { echo "error: pallas-mocks exited; see $run/mocks.log" >&2; exit 1; }
  [ $SECONDS -lt $deadline ] || { echo "error: pallas-mocks did not write urls.json" >&2; exit 1; }
  sleep 0.1
done
read -r llm_url argos_url mnemosyne_url < <(python3 -c '
import json, sys
urls = json.load(open(sys.argv[1]))
print(urls["openai"], urls["argos"], urls["mnemosyne"])' "$run/urls.json")

cat > "$run/cards/research.md" <<CARD
---
name: research
description: Research agent
model: generic.mock-model
servers:
  - argos
  - mnemosyne
---
You research things.
CARD
cat > "$run/fastagent.config.yaml" <<CONFIG
default_model: generic.mock-model
generic:
  api_key: sk-mock-llm-key
  base_url: $llm_url
mcp:
  servers:
    argos:
      transport: http
      url: $argos_url
    mnemosyne:
      transport: http
      url: $mnemosyne_url
      headers:
        Authorization: Bearer dev-token
CONFIG

version=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("fast-agent-mcp"))')
if "$venv/bin/python" -c 'import sys; from packaging.version import Version as V; sys.exit(V(sys.argv[1]) < V("0.10"))' "$version"; then
  home_flag=--home
else
  home_flag=--env
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$run" && FASTMCP_CHECK_FOR_UPDATES=off exec "$fa" --no-update-check serve "$home_flag" "$run/home" \
  --agent-cards "$run/cards" --config-path "$run/fastagent.config.yaml" --transport http \
  --host 127.0.0.1 --port "$port") > "$run/serve.stdout" 2> "$run/serve.stderr" &
pids+=($!)
start=$(date +%s%N)
deadline=$((SECONDS + ready_timeout))
until [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/" || true)" = 200 ]; do
  kill -0 "${pids[-1]}" 2>/dev/null || { echo "error: fast-agent exited; see $run/serve.stderr" >&2; exit 1; }
  [ $SECONDS -lt $deadline ] || { echo "error: not ready after ${ready_timeout}s" >&2; exit 1; }
  sleep 0.05
done
ready_ms=$((($(date +%s%N) - start) / 1000000))

mcp="http://127.0.0.1:$port/mcp"
A='Accept: application/json, text/event-stream'
J='Content-Type: application/json'
sid=$(curl -sS --max-time 30 -D - -o /dev/null -H "$A" -H "$J" "$mcp" \
  -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"with-mocks","version":"0"}}}' \
  | tr -d '\r' | sed -n 's/^[Mm][Cc][Pp]-[Ss]ession-[Ii]d: //p')
curl -sS --max-time 30 -o /dev/null -H "$A" -H "$J" -H "Mcp-Session-Id: $sid" "$mcp" \
  -d '{"jsonrpc":"2.0","method":"notifications/initialized"}'
call() {  # call FILE ID MESSAGE_JSON_STRING TOKEN_JSON
  curl -sS -N --max-time 60 -H "$A" -H "$J" -H "Mcp-Session-Id: $sid" -H 'MCP-Protocol-Version: 2025-11-25' "$mcp" \
    -d "{\"jsonrpc\":\"2.0\",\"id\":$2,\"method\":\"tools/call\",\"params\":{\"name\":\"research\",\"arguments\":{\"message\":$3},\"_meta\":{\"progressToken\":$4}}}" > "$out/$1"
}
call 01-call-argos-progress.txt 2 '"CALL_TOOL argos__search_web {\"query\":\"pallas\"}"' '"p1"'
call 02-call-mnemosyne-headers.txt 3 '"CALL_TOOL mnemosyne__search {}"' 7
curl -sS --max-time 10 -o /dev/null -X DELETE -H "Mcp-Session-Id: $sid" "$mcp" || true
cleanup
trap - EXIT
printf 'version=%s\nready_ms=%s\n' "$version" "$ready_ms" | tee "$out/summary.txt"
for f in "$out"/0[12]-*.txt; do
  printf '%s: %s progress notifications, result: %s\n' "$(basename "$f")" \
    "$(grep -c 'notifications/progress' "$f" || true)" \
    "$(grep -q '"isError":false' "$f" && echo ok || echo 'not ok')" | tee -a "$out/summary.txt"
done
if grep -rl -e 'sk-mock-llm-key' "$run"/serve.* "$run/home" 2>/dev/null; then
  echo "warning: the LLM key appears in the files listed above" | tee -a "$out/summary.txt"
fi
