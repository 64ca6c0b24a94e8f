#!/usr/bin/env python3
"""A scripted OpenAI-compatible chat-completions server (stdlib only), for driving fast-agent offline.

    python3 fake_llm.py [--host 127.0.0.1] [--port 0] [--log requests.jsonl]
                        [--tool SUFFIX] [--args JSON] [--url-file PATH]

Behaviour of `POST /v1/chat/completions` (streaming or not, as the request asks):
  * when the last message has role `tool`, answer with final text
    `done: <content of that tool message>`;
  * otherwise, when the request offers a tool whose name equals SUFFIX or ends with
    `__SUFFIX`, `-SUFFIX` or `.SUFFIX`, answer with one call to that tool with arguments ARGS;
  * otherwise answer with final text `no tool matching <SUFFIX>`.
`GET /v1/models` lists one model. Every request (method, path, headers with `Authorization`
redacted, JSON body) is appended to the log as one JSON line. The bound base URL
(`http://HOST:PORT/v1`) is printed on stdout and written to --url-file.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REDACTED = "<redacted>"


def _redact_headers(headers) -> dict[str, str]:
    out = {}
    for key, value in headers.items():
        if key.lower() in {"authorization", "x-api-key", "api-key"}:
            out[key] = REDACTED
        else:
            out[key] = value
    return out


def _matching_tool(tools: list[dict], suffix: str) -> str | None:
    for tool in tools or []:
        name = (tool.get("function") or {}).get("name") or tool.get("name") or ""
        if name == suffix or any(name.endswith(sep + suffix) for sep in ("__", "-", ".", "/")):
            return name
    return None


def plan_reply(body: dict, suffix: str, args: dict) -> dict:
    """Decide the assistant turn: {"text": ...} or {"tool": name, "arguments": {...}}."""
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    if last.get("role") == "tool":
        content = last.get("content")
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        return {"text": f"done: {content}"}
    name = _matching_tool(body.get("tools") or [], suffix)
    if name is None:
        return {"text": f"no tool matching {suffix}"}
    return {"tool": name, "arguments": args}


class _State:
    def __init__(self, log_path: Path | None, suffix: str, args: dict) -> None:
        self.log_path = log_path
        self.suffix = suffix
        self.args = args
        self.lock = threading.Lock()
        self.counter = 0

    def next_id(self) -> int:
        with self.lock:
            self.counter += 1
            return self.counter

    def log(self, record: dict) -> None:
        if self.log_path is None:
            return
        with self.lock, self.log_path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")


def make_handler(state: _State):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format, *args):  # noqa: A002 - signature fixed by the base class
            return

        def _send_json(self, status: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):  # noqa: N802
            state.log({"time": time.time(), "method": "GET", "path": self.path,
                       "headers": _redact_headers(self.headers)})
            if self.path.rstrip("/").endswith("/models"):
                self._send_json(200, {"object": "list", "data": [
                    {"id": "fake-model", "object": "model", "created": 0, "owned_by": "fake"}]})
            else:
                self._send_json(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self):  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError as exc:
                self._send_json(400, {"error": {"message": f"invalid JSON: {exc}"}})
                return
            state.log({"time": time.time(), "method": "POST", "path": self.path,
                       "headers": _redact_headers(self.headers), "body": body})
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send_json(404, {"error": {"message": f"no route {self.path}"}})
                return
            reply = plan_reply(body, state.suffix, state.args)
            n = state.next_id()
            model = body.get("model") or "fake-model"
            if body.get("stream"):
                self._stream(reply, n, model, bool((body.get("stream_options") or {}).get("include_usage")))
            else:
                self._send_json(200, self._completion(reply, n, model))

        @staticmethod
        def _completion(reply: dict, n: int, model: str) -> dict:
            if "tool" in reply:
                message = {"role": "assistant", "content": None, "tool_calls": [{
                    "id": f"call_{n}", "type": "function",
                    "function": {"name": reply["tool"], "arguments": json.dumps(reply["arguments"])}}]}
                finish = "tool_calls"
            else:
                message = {"role": "assistant", "content": reply["text"]}
                finish = "stop"
            return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": int(time.time()),
                    "model": model, "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}

        def _stream(self, reply: dict, n: int, model: str, include_usage: bool) -> None:
            base = {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk",
                    "created": int(time.time()), "model": model}

            def chunk(delta: dict, finish: str | None = None) -> dict:
                return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

            events = [chunk({"role": "assistant", "content": ""})]
            if "tool" in reply:
                events.append(chunk({"tool_calls": [{"index": 0, "id": f"call_{n}", "type": "function",
                                                     "function": {"name": reply["tool"], "arguments": ""}}]}))
                events.append(chunk({"tool_calls": [{"index": 0, "function": {
                    "arguments": json.dumps(reply["arguments"])}}]}))
                events.append(chunk({}, "tool_calls"))
            else:
                events.append(chunk({"content": reply["text"]}))
                events.append(chunk({}, "stop"))
            if include_usage:
                events.append({**base, "choices": [],
                               "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for event in events:
                self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True

    return Handler


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log", type=Path, help="append one JSON line per request here")
    parser.add_argument("--tool", default="echo", help="suffix of the tool to call (default: echo)")
    parser.add_argument("--args", default='{"text": "hello"}', help="JSON arguments of the tool call")
    parser.add_argument("--url-file", type=Path, help="write the bound base URL here")
    ns = parser.parse_args(argv)
    try:
        args = json.loads(ns.args)
    except json.JSONDecodeError as exc:
        parser.error(f"--args is not JSON: {exc}")
    server = ThreadingHTTPServer((ns.host, ns.port), make_handler(_State(ns.log, ns.tool, args)))
    url = f"http://{ns.host}:{server.server_address[1]}/v1"
    if ns.url_file:
        ns.url_file.write_text(url + "\n")
    print(url, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
