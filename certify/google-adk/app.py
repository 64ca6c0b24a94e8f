"""Google ADK agents served over MCP with ``to_mcp_server``, for the conformance kit.

    python certify/google-adk/app.py RUN_DIR PORT

Builds one ADK ``LlmAgent`` per agent card the harness rendered into RUN_DIR (see
certify/python/deployment.py): its model is ADK's ``OpenAILlm`` (``google.adk.integrations.openai``)
pointed at the scenario's mock LLM (the provider's ``base_url`` and ``api_key``), its tools one
``McpToolset`` per downstream mock MCP server (Streamable HTTP), its instruction the card's body.
Each agent becomes an MCP server with ADK's own ``to_mcp_server(agent, name=...)``
(google/adk/tools/mcp_tool/_agent_to_mcp.py): one tool named after the agent, argument
``request``, intermediate events as progress notifications, one ADK session per MCP connection.
``to_mcp_server`` makes one server per agent; this app serves them all on 127.0.0.1:PORT, each at
``/AGENT/mcp`` (the server's own Streamable HTTP app, mounted; their session managers run in this
app's lifespan). Nothing leaves loopback.
"""

from __future__ import annotations

import contextlib
import pathlib
import re
import sys
import warnings

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "python"))

import deployment  # noqa: E402
import uvicorn  # noqa: E402
from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.integrations.openai import OpenAILlm  # noqa: E402
from google.adk.tools.mcp_tool import McpToolset, StreamableHTTPConnectionParams  # noqa: E402
from google.adk.tools.mcp_tool._agent_to_mcp import to_mcp_server  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.routing import Mount  # noqa: E402

# to_mcp_server is marked experimental; its warning says so once per process, nothing more.
warnings.filterwarnings("ignore", message=".*EXPERIMENTAL.*")


def build(a: deployment.Agent) -> LlmAgent:
    if a.provider != "openai":
        # Only an OpenAI-compatible model is wired; a scenario with another provider cannot start.
        raise SystemExit(f"agent {a.name}: provider {a.provider!r} is not wired in certify/google-adk/app.py")
    model = OpenAILlm(model=a.model, base_url=a.base_url, api_key=a.api_key or "sk-placeholder-not-a-secret")
    tools = [
        # Named `SERVER__TOOL` (the prefix plus ADK's "_"), as fast-agent names them, so that the
        # scenarios' scripted mock LLM sees the tool names it offers calls for.
        McpToolset(
            connection_params=StreamableHTTPConnectionParams(url=s.url, headers=s.headers or None),
            tool_name_prefix=f"{s.name}_",
        )
        for s in a.servers
    ]
    return LlmAgent(
        # An ADK agent's name must be a Python identifier; the MCP tool keeps the deployment's name.
        name=re.sub(r"\W", "_", a.name),
        description=a.description or "",
        instruction=a.instruction,
        model=model,
        tools=tools,
    )


def main() -> None:
    run_dir, port = sys.argv[1], int(sys.argv[2])
    servers = {a.name: to_mcp_server(build(a), name=a.name) for a in deployment.read(run_dir)}
    apps = {name: server.streamable_http_app(streamable_http_path="/mcp") for name, server in servers.items()}

    @contextlib.asynccontextmanager
    async def lifespan(_app):
        async with contextlib.AsyncExitStack() as stack:
            for server in servers.values():
                await stack.enter_async_context(server.session_manager.run())
            yield

    app = Starlette(routes=[Mount(f"/{name}", app=sub) for name, sub in apps.items()], lifespan=lifespan)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="info")


if __name__ == "__main__":
    main()
