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

from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client


async def main(registry: str) -> None:
    with urllib.request.urlopen(registry.rstrip("/") + "/.well-known/mcp/server.json") as r:
        doc = json.load(r)
    server = doc["servers"][0]["server"]
    url = next(x["url"] for x in server["remotes"] if x["type"] == "streamable-http")
    headers = {"Authorization": "Bearer " + os.environ["RECORD_BEARER"]}
    seen = []

    async def on_progress(progress, total, message):
        seen.append((progress, total, message))

    async with streamablehttp_client(url, headers=headers) as (read, write, _):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            names = [t.name for t in tools.tools]
            assert "get_health" in names and "send_message" in names, names
            health = await session.call_tool("get_health", {})
            assert not health.isError, health
            answer = await session.call_tool(
                "send_message", {"message": "hello from the SDK"}, progress_callback=on_progress
            )
            assert not answer.isError, answer
    print(f"progress: {seen}")


asyncio.run(main(sys.argv[1]))
