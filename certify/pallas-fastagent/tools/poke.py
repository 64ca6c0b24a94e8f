"""Raw-wire check of a running Pallas agent: initialize, tools/list, get_health, send_message
with a progress token and a bearer, prompts/list. Prints every JSON-RPC message received.

    python tools/poke.py http://127.0.0.1:8201/mcp 'CALL_TOOL argos__search_web {"query":"pallas"}'
"""

import json
import sys

import httpx

url, message = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "hello"
H = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def rpc(client, sid, method, params=None, rid=1, extra=None):
    headers = dict(H, **(extra or {}))
    if sid:
        headers["Mcp-Session-Id"] = sid
        headers["MCP-Protocol-Version"] = "2025-11-25"
    body = {"jsonrpc": "2.0", "method": method, "params": params or {}}
    if rid is not None:
        body["id"] = rid
    r = client.post(url, json=body, headers=headers)
    msgs = []
    for line in r.text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            msgs.append(json.loads(line[5:]))
    if not msgs and r.text.strip().startswith("{"):
        msgs.append(r.json())
    return r, msgs


with httpx.Client(timeout=120) as c:
    r, m = rpc(c, None, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                       "clientInfo": {"name": "poke", "version": "0"}})
    sid = r.headers.get("mcp-session-id")
    print("initialize", r.status_code, json.dumps(m)[:300])
    rpc(c, sid, "notifications/initialized", rid=None)
    _, m = rpc(c, sid, "tools/list", rid=2)
    print("tools/list", json.dumps(m)[:1200])
    _, m = rpc(c, sid, "tools/call", {"name": "get_health", "arguments": {}}, rid=3)
    print("get_health", json.dumps(m))
    _, m = rpc(c, sid, "tools/call", {"name": "send_message", "arguments": {"message": message},
                                      "_meta": {"progressToken": "tok-1"}}, rid=4,
               extra={"Authorization": "Bearer inbound-xyz"})
    for x in m:
        print("send_message", json.dumps(x)[:400])
    _, m = rpc(c, sid, "prompts/list", rid=5)
    print("prompts/list", json.dumps(m)[:300])
