"""LlamaIndex workflows served over MCP by ``workflow_as_mcp``, for the conformance kit.

    python certify/llamaindex/app.py RUN_DIR PORT

For every agent card the harness rendered into RUN_DIR (see certify/python/deployment.py) it
builds a LlamaIndex ``Workflow`` (``AgentRun``) whose one step runs a ``FunctionAgent``: its LLM is
``OpenAILike`` pointed at the scenario's mock LLM (the provider's ``base_url`` and ``api_key``),
its tools are the downstream mock MCP servers' tools (``McpToolSpec`` over ``BasicMCPClient``,
Streamable HTTP, listed anew for every run), renamed ``SERVER__TOOL`` as fast-agent names them so
that the scenarios' scripted mock LLM sees the tool names it offers calls for, and its system
prompt is the card's body. The workflow's start event is ``MessageStart(message: str)``.

``llama_index.tools.mcp.workflow_as_mcp(workflow, workflow_name=AGENT)`` turns each workflow into
an MCP server (the ``mcp`` package's ``MCPServer``) with one tool named after the agent, taking
``run_args: MessageStart``; every event the run streams goes out as an MCP log notification
(``notifications/message``), the stop event's result is the tool's result. Each agent's server is
mounted at ``/AGENT/mcp`` of one Starlette app on 127.0.0.1:PORT (uvicorn). Nothing leaves
loopback.
"""

from __future__ import annotations

import contextlib
import logging
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "python"))

import deployment  # noqa: E402
import uvicorn  # noqa: E402
from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.workflow import Context, StartEvent, StopEvent, Workflow, step  # noqa: E402
from llama_index.llms.openai_like import OpenAILike  # noqa: E402
from llama_index.tools.mcp import BasicMCPClient, McpToolSpec, workflow_as_mcp  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.routing import Mount  # noqa: E402

log = logging.getLogger("certify.llamaindex")


class MessageStart(StartEvent):
    """The message the tool call brings."""

    message: str


async def mcp_tools(a: deployment.Agent) -> list:
    """The downstream servers' tools, named ``SERVER__TOOL``; a server that cannot be listed is
    left out of this run (and logged)."""
    tools = []
    for s in a.servers:
        try:
            listed = await McpToolSpec(BasicMCPClient(s.url, headers=s.headers or None)).to_tool_list_async()
        except Exception as e:  # noqa: BLE001 - any failure to list leaves the server out
            log.warning("agent %s: the tools of MCP server %s could not be listed: %s", a.name, s.name, e)
            continue
        for t in listed:
            t.metadata.name = f"{s.name}__{t.metadata.name}"
        tools.extend(listed)
    return tools


class AgentRun(Workflow):
    """Runs one message through the agent (a FunctionAgent over the scenario's mock LLM and MCP servers)."""

    def __init__(self, agent: deployment.Agent, **kwargs) -> None:
        super().__init__(**kwargs)
        self.agent = agent
        self.llm = OpenAILike(
            model=agent.model,
            api_base=agent.base_url,
            api_key=agent.api_key or "sk-placeholder-not-a-secret",
            is_chat_model=True,
            is_function_calling_model=True,
            max_retries=0,
        )

    @step
    async def answer(self, ctx: Context, ev: MessageStart) -> StopEvent:
        agent = FunctionAgent(
            name=self.agent.name,
            description=self.agent.description or self.agent.name,
            system_prompt=self.agent.instruction,
            llm=self.llm,
            tools=await mcp_tools(self.agent),
        )
        handler = agent.run(user_msg=ev.message)
        async for event in handler.stream_events():
            # workflow_as_mcp sends each event of this workflow's stream as a log notification.
            ctx.write_event_to_stream(event)
        return StopEvent(result=str(await handler))


def main() -> None:
    run_dir, port = sys.argv[1], int(sys.argv[2])
    agents = deployment.read(run_dir)
    for a in agents:
        if a.provider != "openai":
            # Only an OpenAI-compatible model is wired; a scenario with another provider cannot start.
            raise SystemExit(f"agent {a.name}: provider {a.provider!r} is not wired in certify/llamaindex/app.py")
    servers = {
        a.name: workflow_as_mcp(
            AgentRun(a, timeout=None),
            workflow_name=a.name,
            workflow_description=a.description or f"Send a message to the agent {a.name}.",
            name=a.name,
        )
        for a in agents
    }
    routes = [Mount(f"/{name}", app=server.streamable_http_app()) for name, server in servers.items()]

    @contextlib.asynccontextmanager
    async def lifespan(app):
        async with contextlib.AsyncExitStack() as stack:
            for server in servers.values():
                await stack.enter_async_context(server.session_manager.run())
            yield

    uvicorn.run(Starlette(routes=routes, lifespan=lifespan), host="127.0.0.1", port=port, log_level="info")


if __name__ == "__main__":
    main()
