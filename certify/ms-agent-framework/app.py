"""Microsoft Agent Framework agents served over MCP with ``Agent.as_mcp_server``, for the kit.

    python certify/ms-agent-framework/app.py RUN_DIR PORT

Builds one Agent Framework ``Agent`` per agent card the harness rendered into RUN_DIR (see
certify/python/deployment.py): its client is ``OpenAIChatCompletionClient``
(``agent-framework-openai``, Chat Completions) pointed at the scenario's mock LLM (the provider's
``base_url`` and ``api_key``), its tools one ``MCPStreamableHTTPTool`` per downstream mock MCP
server, its instructions the card's body. Each agent becomes a low-level ``mcp`` server with the
framework's own ``agent.as_mcp_server(server_name=...)`` (agent_framework/_agents.py): one tool
named after the agent, argument ``task``. ``as_mcp_server`` leaves the transport to its caller, so
this app supplies the ``mcp`` SDK's ``StreamableHTTPSessionManager`` (its defaults: sessions, SSE
answers; the SDK's DNS-rebinding settings for a loopback host) for each agent, all served on
127.0.0.1:PORT, each at ``/AGENT/mcp``. Nothing leaves loopback.
"""

from __future__ import annotations

import contextlib
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "python"))

import deployment  # noqa: E402
import uvicorn  # noqa: E402
from agent_framework import Agent, MCPStreamableHTTPTool  # noqa: E402
from agent_framework.openai import OpenAIChatCompletionClient  # noqa: E402
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager  # noqa: E402
from mcp.server.transport_security import TransportSecuritySettings  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.routing import Route  # noqa: E402

_TOOL_KEY = "_mcp_is_tool"  # agent_framework/_mcp.py: marks a FunctionTool made from an MCP tool


class ServerTools(MCPStreamableHTTPTool):
    """A downstream server's tools, each named ``SERVER__TOOL`` as fast-agent names them.

    The framework's own ``tool_name_prefix`` joins with a single ``_`` (and strips a trailing one
    from the prefix), so the loaded functions are renamed instead: the scenarios' scripted mock LLM
    calls ``SERVER__TOOL``. The call itself still goes to the remote tool's own name (each
    function's caller holds it).
    """

    def __init__(self, server: deployment.Server) -> None:
        super().__init__(
            name=server.name,
            url=server.url,
            static_headers=server.headers or None,
            # Only the server's tools reach the model, as with the other bridges certified.
            load_prompts=False,
        )
        self._server_name = server.name

    async def _load_tools_locked(self) -> None:
        await super()._load_tools_locked()
        prefix = f"{self._server_name}__"
        for func in self._functions:
            if (func.additional_properties or {}).get(_TOOL_KEY) and not func.name.startswith(prefix):
                func.name = prefix + func.name


def build(a: deployment.Agent) -> Agent:
    if a.provider != "openai":
        # Only an OpenAI-compatible model is wired; a scenario with another provider cannot start.
        raise SystemExit(f"agent {a.name}: provider {a.provider!r} is not wired in certify/ms-agent-framework/app.py")
    client = OpenAIChatCompletionClient(
        model=a.model, base_url=a.base_url, api_key=a.api_key or "sk-placeholder-not-a-secret"
    )
    return Agent(
        client=client,
        name=a.name,
        description=a.description,
        instructions=a.instruction,
        tools=[ServerTools(s) for s in a.servers],
    )


def main() -> None:
    run_dir, port = sys.argv[1], int(sys.argv[2])
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )
    managers = {
        a.name: StreamableHTTPSessionManager(app=build(a).as_mcp_server(server_name=a.name), security_settings=security)
        for a in deployment.read(run_dir)
    }

    @contextlib.asynccontextmanager
    async def lifespan(_app):
        async with contextlib.AsyncExitStack() as stack:
            for manager in managers.values():
                await stack.enter_async_context(manager.run())
            yield

    routes = [Route(f"/{name}/mcp", endpoint=StreamableHTTPASGIApp(m)) for name, m in managers.items()]
    uvicorn.run(Starlette(routes=routes, lifespan=lifespan), host="127.0.0.1", port=port, log_level="info")


if __name__ == "__main__":
    main()
