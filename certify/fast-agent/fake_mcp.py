#!/usr/bin/env python3
"""A tiny downstream MCP server (the `mcp` package's FastMCP over Streamable HTTP).

    python fake_mcp.py [--host 127.0.0.1] [--port 0] [--log headers.jsonl] [--url-file PATH]

Needs the `mcp` package 1.x (the fast-agent 0.7.22 venv has it). Serves `/mcp` with tools:
  echo(text)           -> "echo: <text>"
  add(a, b)            -> a + b
  steps(n)             -> reports n progress notifications, returns "stepped <n>"
  fail(reason)         -> raises (tool result with isError)
Every HTTP request's method, path and headers (`Authorization` shown as `Bearer <redacted:N chars>`
so forwarding is visible without leaking the value) are appended to --log as JSON lines.
The bound URL (`http://HOST:PORT/mcp`) is printed on stdout and written to --url-file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import sys
import time
from pathlib import Path

import uvicorn
from mcp.server.fastmcp import Context, FastMCP


def _redact(name: str, value: str) -> str:
    if name.lower() != "authorization":
        return value
    scheme, _, token = value.partition(" ")
    return f"{scheme} <redacted:{len(token)} chars>"


class HeaderLog:
    """ASGI middleware appending each request's method, path and headers to a JSON-lines file."""

    def __init__(self, app, path: Path | None) -> None:
        self.app = app
        self.path = path

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and self.path is not None:
            headers = {k.decode(): _redact(k.decode(), v.decode()) for k, v in scope["headers"]}
            record = {"time": time.time(), "method": scope["method"], "path": scope["path"],
                      "headers": headers}
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(record) + "\n")
        await self.app(scope, receive, send)


def build_server() -> FastMCP:
    mcp = FastMCP("fake-downstream")

    @mcp.tool(description="Echo the text back.")
    def echo(text: str) -> str:
        return f"echo: {text}"

    @mcp.tool(description="Add two integers.")
    def add(a: int, b: int) -> int:
        return a + b

    @mcp.tool(description="Report n progress notifications, then return.")
    async def steps(n: int, ctx: Context) -> str:
        for i in range(n):
            await ctx.report_progress(i + 1, n, f"step {i + 1} of {n}")
        return f"stepped {n}"

    @mcp.tool(description="Always fails with the given reason.")
    def fail(reason: str) -> str:
        raise RuntimeError(reason)

    return mcp


async def serve(host: str, port: int, log: Path | None, url_file: Path | None) -> None:
    app = HeaderLog(build_server().streamable_http_app(), log)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    url = f"http://{host}:{sock.getsockname()[1]}/mcp"
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    if url_file:
        url_file.write_text(url + "\n")
    print(url, flush=True)
    await server.serve(sockets=[sock])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log", type=Path, help="append request headers here (JSON lines)")
    parser.add_argument("--url-file", type=Path, help="write the bound URL here")
    ns = parser.parse_args(argv)
    try:
        asyncio.run(serve(ns.host, ns.port, ns.log, ns.url_file))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
