"""BeeAI Framework agents served over MCP by its ``MCPServer``, for the conformance kit.

    python certify/beeai/app.py RUN_DIR PORT

Builds one BeeAI ``LiteAgent`` per agent card the harness rendered into RUN_DIR (see
certify/python/deployment.py): its model is ``OpenAIChatModel`` (LiteLLM's OpenAI provider, BeeAI's
defaults) pointed at the scenario's mock LLM (the provider's ``base_url`` and ``api_key``), its
tools the downstream mock MCP servers' tools (``MCPTool``, one Streamable HTTP session per server,
opened at start as ``MCPTool.from_client`` opens it), renamed ``SERVER__TOOL`` as fast-agent names
them so that the scenarios' scripted mock LLM sees the tool names it offers calls for, its
instruction the card's body (the first message of its memory), its name and description the
card's. Then registers every agent with ``MCPServer(config=MCPServerConfig(transport=
"streamable-http", ...))`` (``server.register(agent)``) and serves it on 127.0.0.1:PORT: the
framework's own FastMCP server (the ``mcp`` package's) at ``/mcp``, one tool per agent, named
after it, taking ``input`` and answering a JSON ``{role, content}`` text
(beeai_framework/adapters/mcp/serve/server.py).

LiteAgent, not BeeAI's RequirementAgent: a RequirementAgent forces a tool call on every model turn
(``tool_choice`` ``required``, or its ``final_answer`` tool when it is the only one allowed) and
re-asks the model when a turn brings only text, so the scenarios' scripted mock LLM, which answers
its script whatever the tool choice, cannot drive it. LiteAgent is BeeAI's plain tool-calling
loop: tools offered as they are, a text answer ends the run. LiteLLM reads its bundled cost map
(``LITELLM_LOCAL_MODEL_COST_MAP``); nothing leaves loopback.
"""

from __future__ import annotations

import asyncio
import logging
import os
import pathlib
import sys

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "python"))

import deployment  # noqa: E402
from beeai_framework.adapters.mcp.serve.server import MCPServer, MCPServerConfig, MCPSettings  # noqa: E402
from beeai_framework.adapters.openai import OpenAIChatModel  # noqa: E402
from beeai_framework.agents.lite import LiteAgent  # noqa: E402
from beeai_framework.backend import SystemMessage  # noqa: E402
from beeai_framework.memory import UnconstrainedMemory  # noqa: E402
from beeai_framework.tools.mcp import MCPTool  # noqa: E402
from beeai_framework.tools.mcp.utils.session_provider import MCPSessionProvider  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402

log = logging.getLogger("certify.beeai")


class ServerTool(MCPTool):
    """A downstream server's tool named ``SERVER__TOOL``; the call still goes to the tool's own
    name (``MCPTool._run`` calls ``self._tool.name``)."""

    server = ""

    @property
    def name(self) -> str:
        return f"{self.server}__{self._tool.name}"


async def mcp_tools(a: deployment.Agent) -> list:
    """The downstream servers' tools; a server that cannot be listed is left out (and logged)."""
    tools = []
    for s in a.servers:
        cls = type(f"ServerTool_{s.name}", (ServerTool,), {"server": s.name})
        client = streamable_http_client(s.url, http_client=create_mcp_http_client(headers=s.headers or None))
        try:
            # As MCPTool.from_client, whose from_session makes plain MCPTools: the session kept
            # open by BeeAI's MCPSessionProvider for as long as a tool of it lives.
            provider = MCPSessionProvider(client)
            session = await provider.session()
            listed = [cls(session, t) for t in (await session.list_tools()).tools]
            provider.refs += len(listed)
            tools.extend(listed)
        except Exception as e:  # noqa: BLE001 - any failure to list leaves the server out
            log.warning("agent %s: the tools of MCP server %s could not be listed: %s", a.name, s.name, e)
    return tools


async def build(a: deployment.Agent) -> LiteAgent:
    if a.provider != "openai":
        # Only an OpenAI-compatible model is wired; a scenario with another provider cannot start.
        raise SystemExit(f"agent {a.name}: provider {a.provider!r} is not wired in certify/beeai/app.py")
    llm = OpenAIChatModel(a.model, base_url=a.base_url, api_key=a.api_key or "sk-placeholder-not-a-secret")
    # LiteAgent has no system prompt of its own: the card's instruction is the first message of
    # its memory, which every call starts from (MCPServer runs a clone of the agent per call).
    memory = UnconstrainedMemory()
    await memory.add(SystemMessage(a.instruction))
    return LiteAgent(llm=llm, memory=memory, tools=await mcp_tools(a), name=a.name, description=a.description)


async def main() -> None:
    run_dir, port = sys.argv[1], int(sys.argv[2])
    server = MCPServer(
        config=MCPServerConfig(transport="streamable-http", settings=MCPSettings(host="127.0.0.1", port=port))
    )
    for a in deployment.read(run_dir):
        server.register(await build(a))
    await server.aserve()


if __name__ == "__main__":
    asyncio.run(main())
