"""Agno AgentOS serving a scenario's agents over MCP (`/mcp`), for the conformance kit.

    python certify/agno/app.py RUN_DIR PORT

Builds one Agno ``Agent`` per agent card the harness rendered into RUN_DIR (see
certify/python/deployment.py): its model is ``OpenAILike`` pointed at the scenario's mock LLM
(the provider's ``base_url`` and ``api_key``), its tools are one ``MCPTools`` per downstream mock
MCP server (Streamable HTTP), its instructions the card's body, its id the agent's name. Then
serves ``AgentOS(agents=..., mcp=True)`` on 127.0.0.1:PORT with uvicorn: AgentOS's own MCP server
at ``/mcp`` with its default tools, among them ``run_agent(agent_id, message)`` (the message tool
of scenarios/targets/agno.yaml). Telemetry is off; nothing leaves loopback.
"""

from __future__ import annotations

import os
import pathlib
import sys

os.environ.setdefault("AGNO_TELEMETRY", "false")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "python"))

import deployment  # noqa: E402
import uvicorn  # noqa: E402
from agno.agent import Agent  # noqa: E402
from agno.models.openai.like import OpenAILike  # noqa: E402
from agno.os import AgentOS  # noqa: E402
from agno.tools.mcp import MCPTools  # noqa: E402


def build(a: deployment.Agent) -> Agent:
    if a.provider != "openai":
        # Only an OpenAI-compatible model is wired; a scenario with another provider cannot start.
        raise SystemExit(f"agent {a.name}: provider {a.provider!r} is not wired in certify/agno/app.py")
    model = OpenAILike(id=a.model, base_url=a.base_url, api_key=a.api_key or "sk-placeholder-not-a-secret")
    tools = [
        # Named `SERVER__TOOL` (the prefix plus agno's "_"), as fast-agent names them, so that the
        # scenarios' scripted mock LLM sees the tool names it offers calls for.
        MCPTools(url=s.url, transport="streamable-http", headers=s.headers or None, tool_name_prefix=f"{s.name}_")
        for s in a.servers
    ]
    return Agent(
        id=a.name,
        name=a.name,
        description=a.description,
        instructions=a.instruction,
        model=model,
        tools=tools,
        telemetry=False,
    )


def main() -> None:
    run_dir, port = sys.argv[1], int(sys.argv[2])
    agents = [build(a) for a in deployment.read(run_dir)]
    agent_os = AgentOS(name="pallas-conformance", agents=agents, mcp=True, telemetry=False)
    app = agent_os.get_app()
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="info")


if __name__ == "__main__":
    main()
