#!/usr/bin/env bash
# Send a fixed series of raw HTTP requests to a fast-agent `serve` endpoint and save each
# response (headers + body, SSE as received) under OUTDIR/NN-name.txt.
#
#   certify/fast-agent/probe.sh BASE_URL AGENT OUTDIR
#
# BASE_URL is the server root (e.g. http://127.0.0.1:8000); the MCP endpoint is BASE_URL/mcp.
# AGENT is the agent name (its message tool). Every request has a 30 s timeout.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 BASE_URL AGENT OUTDIR" >&2; exit 2; }
base=${1%/}
agent=$2
out=$3
mcp="$base/mcp"
mkdir -p "$out"

ACCEPT='Accept: application/json, text/event-stream'
CT='Content-Type: application/json'
n=0

# probe NAME CURL-ARGS...: saves the request line, response headers and body.
probe() {
  local name=$1; shift
  n=$((n + 1))
  local file
  file=$(printf '%s/%02d-%s.txt' "$out" "$n" "$name")
  {
    echo "### request: curl $*" | sed -E 's/(Authorization: Bearer )[^ '"'"']+/\1<redacted>/I'
    echo "### response"
    curl -sS -N --max-time 30 -D - "$@" 2>&1 || echo "### curl exit $?"
  } > "$file"
}

init_body() {
  printf '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"%s","capabilities":{},"clientInfo":{"name":"probe","version":"0"}}}' "$1"
}

# open_session VERSION: initialize + initialized; prints the session id (empty when none).
open_session() {
  local headers sid
  headers=$(curl -sS --max-time 30 -D - -o /dev/null -H "$ACCEPT" -H "$CT" "$mcp" -d "$(init_body "$1")")
  sid=$(printf '%s\n' "$headers" | tr -d '\r' | sed -n 's/^[Mm][Cc][Pp]-[Ss]ession-[Ii]d: //p')
  curl -sS --max-time 30 -o /dev/null -H "$ACCEPT" -H "$CT" -H "Mcp-Session-Id: $sid" \
    -H "MCP-Protocol-Version: $1" "$mcp" -d '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  printf '%s' "$sid"
}

call() {  # call ID TOOL ARGS_JSON [META_JSON]
  if [ -n "${4:-}" ]; then
    printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s","arguments":%s,"_meta":%s}}' "$1" "$2" "$3" "$4"
  else
    printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s","arguments":%s}}' "$1" "$2" "$3"
  fi
}

probe root-get "$base/"
probe metrics-get "$base/metrics"
probe registry-get "$base/.well-known/mcp/server.json"
probe healthz-get "$base/healthz"

V=2025-11-25
probe initialize-2025-11-25 -H "$ACCEPT" -H "$CT" "$mcp" -d "$(init_body $V)"
probe initialize-2026-07-28 -H "$ACCEPT" -H "$CT" "$mcp" -d "$(init_body 2026-07-28)"
probe initialize-1999-01-01 -H "$ACCEPT" -H "$CT" "$mcp" -d "$(init_body 1999-01-01)"
probe initialize-accept-json-only -H 'Accept: application/json' -H "$CT" "$mcp" -d "$(init_body $V)"
probe initialize-accept-missing -H "$CT" "$mcp" -d "$(init_body $V)"
probe initialize-content-type-text -H "$ACCEPT" -H 'Content-Type: text/plain' "$mcp" -d "$(init_body $V)"
probe malformed-json -H "$ACCEPT" -H "$CT" "$mcp" -d '{"jsonrpc":'

sid=$(open_session $V)
S=(-H "$ACCEPT" -H "$CT" -H "Mcp-Session-Id: $sid" -H "MCP-Protocol-Version: $V")
probe tools-list "${S[@]}" "$mcp" -d '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
probe prompts-list "${S[@]}" "$mcp" -d '{"jsonrpc":"2.0","id":3,"method":"prompts/list"}'
probe resources-list "${S[@]}" "$mcp" -d '{"jsonrpc":"2.0","id":4,"method":"resources/list"}'
probe ping "${S[@]}" "$mcp" -d '{"jsonrpc":"2.0","id":5,"method":"ping"}'
probe unknown-method "${S[@]}" "$mcp" -d '{"jsonrpc":"2.0","id":6,"method":"no/such_method"}'
probe call-progress-string "${S[@]}" "$mcp" -d "$(call 10 "$agent" '{"message":"progress with a string token"}' '{"progressToken":"tok-abc"}')"
probe call-progress-number "${S[@]}" "$mcp" -d "$(call 11 "$agent" '{"message":"progress with a number token"}' '{"progressToken":42}')"
probe call-no-token "${S[@]}" "$mcp" -d "$(call 12 "$agent" '{"message":"no progress token"}')"
probe call-get-health "${S[@]}" "$mcp" -d "$(call 13 get_health '{}' '{"progressToken":"h1"}')"
probe call-unknown-tool "${S[@]}" "$mcp" -d "$(call 14 no_such_tool '{"message":"x"}')"
probe call-missing-message "${S[@]}" "$mcp" -d "$(call 15 "$agent" '{}')"
probe call-message-wrong-type "${S[@]}" "$mcp" -d "$(call 16 "$agent" '{"message":42}')"
probe call-extra-argument "${S[@]}" "$mcp" -d "$(call 17 "$agent" '{"message":"x","extra":1}')"
probe prompt-history "${S[@]}" "$mcp" -d "{\"jsonrpc\":\"2.0\",\"id\":18,\"method\":\"prompts/get\",\"params\":{\"name\":\"${agent}_history\"}}"
probe call-with-bearer "${S[@]}" -H 'Authorization: Bearer probe-secret-token' "$mcp" -d "$(call 19 "$agent" '{"message":"bearer"}' '{"progressToken":"b1"}')"
probe header-version-2026-07-28 -H "$ACCEPT" -H "$CT" -H "Mcp-Session-Id: $sid" -H 'MCP-Protocol-Version: 2026-07-28' "$mcp" -d '{"jsonrpc":"2.0","id":20,"method":"tools/list"}'
probe header-version-bogus -H "$ACCEPT" -H "$CT" -H "Mcp-Session-Id: $sid" -H 'MCP-Protocol-Version: 1999-01-01' "$mcp" -d '{"jsonrpc":"2.0","id":21,"method":"tools/list"}'
probe get-sse-stream --max-time 2 -H 'Accept: text/event-stream' -H "Mcp-Session-Id: $sid" -H "MCP-Protocol-Version: $V" "$mcp"
probe no-session-id -H "$ACCEPT" -H "$CT" -H "MCP-Protocol-Version: $V" "$mcp" -d '{"jsonrpc":"2.0","id":22,"method":"tools/list"}'
probe unknown-session-id -H "$ACCEPT" -H "$CT" -H 'Mcp-Session-Id: 00000000000000000000000000000000' -H "MCP-Protocol-Version: $V" "$mcp" -d '{"jsonrpc":"2.0","id":23,"method":"tools/list"}'
# A second session: does it see the first session's history (instance scope)?
sidb=$(open_session $V)
probe second-session-call -H "$ACCEPT" -H "$CT" -H "Mcp-Session-Id: $sidb" -H "MCP-Protocol-Version: $V" "$mcp" -d "$(call 25 "$agent" '{"message":"second session"}')"
[ -z "$sidb" ] || curl -sS --max-time 10 -o /dev/null -X DELETE -H "Mcp-Session-Id: $sidb" "$mcp" || true
probe delete-session -X DELETE -H "Mcp-Session-Id: $sid" -H "MCP-Protocol-Version: $V" "$mcp"
probe after-delete "${S[@]}" "$mcp" -d '{"jsonrpc":"2.0","id":24,"method":"tools/list"}'
probe delete-unknown-session -X DELETE -H 'Mcp-Session-Id: 00000000000000000000000000000000' "$mcp"

# A session negotiated at 2026-07-28 (if the server accepts it), then a call with progress.
sid2=$(open_session 2026-07-28)
probe session-2026-07-28-call -H "$ACCEPT" -H "$CT" -H "Mcp-Session-Id: $sid2" -H 'MCP-Protocol-Version: 2026-07-28' "$mcp" -d "$(call 30 "$agent" '{"message":"2026 session"}' '{"progressToken":"t2026"}')"
[ -z "$sid2" ] || curl -sS --max-time 10 -o /dev/null -X DELETE -H "Mcp-Session-Id: $sid2" "$mcp" || true
# 2026-07-28 (no initialize, no session): lifecycle data travels in every request's _meta.
M=(-H "$ACCEPT" -H "$CT" -H 'MCP-Protocol-Version: 2026-07-28')
env='"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"probe","version":"0"}'
probe modern-no-method-header "${M[@]}" "$mcp" -d "{\"jsonrpc\":\"2.0\",\"id\":40,\"method\":\"tools/list\",\"params\":{\"_meta\":{$env}}}"
probe modern-discover "${M[@]}" -H 'Mcp-Method: server/discover' "$mcp" -d "{\"jsonrpc\":\"2.0\",\"id\":41,\"method\":\"server/discover\",\"params\":{\"_meta\":{$env}}}"
probe modern-tools-list "${M[@]}" -H 'Mcp-Method: tools/list' "$mcp" -d "{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"tools/list\",\"params\":{\"_meta\":{$env}}}"
probe modern-call-progress "${M[@]}" -H 'Mcp-Method: tools/call' -H "Mcp-Name: $agent" "$mcp" -d "$(call 43 "$agent" '{"message":"modern call"}' "{\"progressToken\":\"m1\",$env}")"
probe modern-call-unknown-tool "${M[@]}" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: no_such_tool' "$mcp" -d "$(call 44 no_such_tool '{"message":"x"}' "{$env}")"
probe modern-get -H 'Accept: text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' "$mcp"
probe modern-delete -X DELETE -H 'MCP-Protocol-Version: 2026-07-28' "$mcp"
echo "$n probes written to $out"
