"""A Daedalus-like session with the official Python `mcp` SDK, for tests/tests/record.rs.

Usage: python record_sdk_client.py REGISTRY_URL (bearer in RECORD_BEARER). Fetches the registry,
then for its first agent: initialize, tools/list, get_health, send_message with a progress
callback, and ends the session (the SDK sends DELETE on exit).
"""

import asyncio
import json
import os
import sys
import urllib.request

from contextlib import asynccontextmanager

from mcp import ClientSession

try:  # mcp >= 2: the transport takes a configured httpx client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    @asynccontextmanager
    async def connect(url, headers):
        async with create_mcp_http_client(headers=headers) as http:
            async with streamable_http_client(url, http_client=http) as streams:
                yield streams[0], streams[1]

except ImportError:  # mcp 1.x
    from mcp.client.streamable_http import streamablehttp_client

    @asynccontextmanager
    async def connect(url, headers):
        async with streamablehttp_client(url, headers=headers) as streams:
            yield streams[0], streams[1]


async def main(registry: str) -> None:
    with urllib.request.urlopen(registry.rstrip("/") + "/.well-known/mcp/server.json") as r:
        doc = json.load(r)
    server = doc["servers"][0]["server"]
    url = next(x["url"] for x in server["remotes"] if x["type"] == "streamable-http")
    headers = {"Authorization": "Bearer " + os.environ["RECORD_BEARER"]}
    seen = []

    def failed(result):  # `is_error` in mcp 2, `isError` in mcp 1
        return getattr(result, "is_error", getattr(result, "isError", None))

    async def on_progress(progress, total, message):
        seen.append((progress, total, message))

    async with connect(url, headers) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            names = [t.name for t in tools.tools]
            assert "get_health" in names and "send_message" in names, names
            health = await session.call_tool("get_health", {})
            assert not failed(health), health
            answer = await session.call_tool(
                "send_message", {"message": "hello from the SDK"}, progress_callback=on_progress
            )
            assert not failed(answer), answer
    print(f"progress: {seen}")


asyncio.run(main(sys.argv[1]))
