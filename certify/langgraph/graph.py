"""One LangGraph graph per agent of a scenario's deployment, for LangGraph Server's `/mcp`.

LangGraph Server exposes each assistant (graph) as an MCP tool named after it, whose
`inputSchema` is the graph's input schema (langgraph_api/api/mcp/_handlers.py). The graph here
takes `{"message": str}` (so the message tool is `{agent}` with `{message}`, as Pallas's) and
returns `{"response": str}`: a tool loop over an OpenAI-compatible chat model (`ChatOpenAI` at
the scenario's mock LLM) bound to the tools of the agent's downstream MCP servers (langchain-mcp-
adapters, Streamable HTTP), named `SERVER__TOOL` as fast-agent names them, so that the scenarios'
scripted mock LLM sees the tool names it calls.
"""

from __future__ import annotations

import pathlib
import sys
from typing import Annotated, TypedDict

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "python"))

import deployment  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage  # noqa: E402
from langchain_mcp_adapters.client import MultiServerMCPClient  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.graph.message import add_messages  # noqa: E402
from langgraph.prebuilt import ToolNode  # noqa: E402

# A runaway loop ends here rather than at LangGraph's recursion limit.
MAX_ROUNDS = 12


class Input(TypedDict):
    message: str


class Output(TypedDict):
    response: str


class State(TypedDict):
    message: str
    messages: Annotated[list, add_messages]
    response: str


async def _tools(agent: deployment.Agent) -> list:
    if not agent.servers:
        return []
    client = MultiServerMCPClient(
        {
            s.name: {"url": s.url, "transport": "streamable_http", "headers": s.headers or None}
            for s in agent.servers
        }
    )
    tools = []
    for s in agent.servers:
        for t in await client.get_tools(server_name=s.name):
            t.name = f"{s.name}__{t.name}"
            tools.append(t)
    return tools


async def build(run_dir: str, name: str):
    agent = next(a for a in deployment.read(run_dir) if a.name == name)
    if agent.provider != "openai":
        raise RuntimeError(f"agent {name}: provider {agent.provider!r} is not wired in certify/langgraph/graph.py")
    tools = await _tools(agent)
    llm = ChatOpenAI(
        model=agent.model,
        base_url=agent.base_url,
        api_key=agent.api_key or "sk-placeholder-not-a-secret",
    )
    model = llm.bind_tools(tools) if tools else llm

    async def begin(state: State) -> dict:
        return {"messages": [SystemMessage(agent.instruction), HumanMessage(state["message"])]}

    async def think(state: State) -> dict:
        return {"messages": [await model.ainvoke(state["messages"])]}

    def route(state: State) -> str:
        last = state["messages"][-1]
        rounds = sum(1 for m in state["messages"] if isinstance(m, AIMessage))
        if isinstance(last, AIMessage) and last.tool_calls and rounds < MAX_ROUNDS:
            return "tools"
        return "finish"

    async def finish(state: State) -> dict:
        last = state["messages"][-1]
        text = last.content if isinstance(last.content, str) else str(last.content)
        return {"response": text}

    g = StateGraph(State, input_schema=Input, output_schema=Output)
    g.add_node("begin", begin)
    g.add_node("think", think)
    g.add_node("finish", finish)
    g.add_edge(START, "begin")
    g.add_edge("begin", "think")
    if tools:
        g.add_node("tools", ToolNode(tools, handle_tool_errors=True))
        g.add_conditional_edges("think", route, {"tools": "tools", "finish": "finish"})
        g.add_edge("tools", "think")
    else:
        g.add_edge("think", "finish")
    g.add_edge("finish", END)
    return g.compile(name=name)


def factory(run_dir: str, name: str):
    """A graph factory for langgraph.json: builds the graph once, on first use."""
    built = {}

    async def make_graph(config=None):
        if "graph" not in built:
            built["graph"] = await build(run_dir, name)
        return built["graph"]

    return make_graph
