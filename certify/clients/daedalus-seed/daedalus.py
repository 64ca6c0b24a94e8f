#!/usr/bin/env python3
"""Command-line Daedalus: discover Pallas agents, check their health, chat with one.

Implements the Daedalus side of the Pallas MCP interface (seed 000):
  §1/§3  GET {registry}/.well-known/mcp/server.json and connect to each agent's
         streamable-http remote;
  §2/§3  call get_health on every agent (a failed check counts as "error");
  §3     refuse to send a message to an agent whose health is "error" (exit 3);
  §4     call the agent's chat tool with a progressToken and render progress.
"""
import argparse
import json
import sys
import uuid
from contextlib import AsyncExitStack
from dataclasses import dataclass

import anyio
import httpx2
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client

TIMEOUT = 30.0  # seconds, for every network operation
HEALTH_STATES = ("ok", "degraded", "error")
EXIT_CHAT_BLOCKED = 3
PROGRESS_SETTLE = 0.2  # seconds


@dataclass
class Agent:
    server_id: str  # segment of server.name after the last "/"
    title: str
    url: str | None  # the streamable-http remote, None if the agent has none
    session: ClientSession | None = None
    status: str = "error"
    reason: str = ""


async def discover(registry_url: str) -> list[Agent]:
    """Fetch the Pallas registry (plain HTTP, no auth) and list its agents."""
    url = registry_url.rstrip("/") + "/.well-known/mcp/server.json"
    try:
        async with httpx2.AsyncClient(timeout=TIMEOUT) as http:
            response = await http.get(url, headers={"Accept": "application/json"})
            response.raise_for_status()
            entries = response.json()["servers"]
    except Exception as exc:
        raise RuntimeError(f"cannot read the Pallas registry at {url}: {describe(exc)}") from exc
    agents = []
    for entry in entries:
        server = entry["server"]
        remote = next((r for r in server.get("remotes") or [] if r.get("type") == "streamable-http"), None)
        agents.append(Agent(server_id=server["name"].rsplit("/", 1)[-1],
                            title=server.get("title") or server["name"],
                            url=remote["url"] if remote else None))
    return agents


class ProgressLine:
    """Renders notifications/progress for the one chat call in flight as a stderr status line."""

    def __init__(self) -> None:
        self.token: str | None = None
        self.tty = sys.stderr.isatty()

    async def __call__(self, message: types.ServerNotification | Exception) -> None:
        if not isinstance(message, types.ProgressNotification):
            return
        p = message.params
        if self.token is None or p.progress_token != self.token:
            return  # not ours, or the final result already arrived
        indicator = "…" if p.total is None else f"{p.progress:g}/{p.total:g}"
        line = f"[{indicator}] {p.message or 'working'}"
        if self.tty:  # replace the previous status in place
            sys.stderr.write(f"\r\x1b[K{line}")
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def start(self) -> str:
        self.token = str(uuid.uuid4())
        return self.token

    def clear(self) -> None:
        self.token = None
        if self.tty:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


async def connect(stack: AsyncExitStack, url: str, headers: dict[str, str], on_message) -> ClientSession:
    http = await stack.enter_async_context(httpx2.AsyncClient(headers=headers, timeout=TIMEOUT))
    read, write = await stack.enter_async_context(streamable_http_client(url, http_client=http))
    session = await stack.enter_async_context(
        ClientSession(read, write, read_timeout_seconds=TIMEOUT, message_handler=on_message))
    await session.initialize()
    return session


async def get_health(session: ClientSession) -> tuple[str, str]:
    """Call get_health (no arguments, no progress token) and parse its JSON text block."""
    result = await session.call_tool("get_health")
    text = next((c.text for c in result.content if isinstance(c, types.TextContent)), "")
    if result.is_error:
        raise RuntimeError(text or "get_health returned an error")
    health = json.loads(text)
    if health.get("status") not in HEALTH_STATES:
        raise ValueError(f"unknown health status {health.get('status')!r}")
    return health["status"], health.get("message") or ""


async def chat(session: ClientSession, message: str, progress: ProgressLine) -> str:
    """Send the message to the agent's chat tool (the first tool that is not get_health)."""
    tool, params = None, None
    while tool is None:
        listing = await session.list_tools(params=params)
        tool = next((t.name for t in listing.tools if t.name != "get_health"), None)
        if tool is None and listing.next_cursor is None:
            raise RuntimeError("agent exposes no chat tool")
        params = types.PaginatedRequestParams(cursor=listing.next_cursor)
    token = progress.start()
    try:
        result = await session.call_tool(tool, {"message": message}, meta={"progressToken": token})
        # Servers may send progress on the standalone GET stream, so a notification sent just
        # before the result can land just after it: let those arrive before clearing the line.
        await anyio.sleep(PROGRESS_SETTLE)
    finally:
        progress.clear()
    text = "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))
    if result.is_error:
        raise RuntimeError(f"{tool} failed: {text}")
    return text


async def run(args: argparse.Namespace) -> int:
    agents = await discover(args.registry_url)
    if not agents:
        print("daedalus: the registry lists no agents", file=sys.stderr)
    headers = {"Authorization": f"Bearer {args.bearer}"} if args.bearer else {}
    progress = ProgressLine()
    async with AsyncExitStack() as stack:
        for agent in agents:
            print(f"daedalus: agent {agent.server_id} ({agent.title}) at {agent.url}", file=sys.stderr)
            try:
                if agent.url is None:
                    raise RuntimeError("no streamable-http remote in the registry")
                async with AsyncExitStack() as agent_stack:
                    session = await connect(agent_stack, agent.url, headers, progress)
                    agent.status, agent.reason = await get_health(session)
                    # Healthy or not, the check worked: keep this session open until the end.
                    await stack.enter_async_context(agent_stack.pop_all())
                    agent.session = session
            except Exception as exc:  # health check failed entirely -> treated as "error"
                agent.status, agent.reason = "error", f"health check failed: {describe(exc)}"
            print(f"{agent.server_id}: {agent.status}" + (f" — {agent.reason}" if agent.reason else ""))

        if args.message is None:
            return 0
        if args.agent is None:
            if not agents:
                raise RuntimeError("no agent to send the message to")
            target = agents[0]
        else:
            target = next((a for a in agents if a.server_id == args.agent), None)
            if target is None:
                raise RuntimeError(f"unknown agent {args.agent!r}; known: {', '.join(a.server_id for a in agents)}")
        if target.status == "error" or target.session is None:
            why = target.reason or "status error"
            print(f"daedalus: chat disabled: agent {target.server_id} is in error ({why})", file=sys.stderr)
            return EXIT_CHAT_BLOCKED
        if target.status == "degraded":
            print(f"daedalus: warning: agent {target.server_id} is degraded: {target.reason}", file=sys.stderr)
        print(await chat(target.session, args.message, progress))
    return 0


def describe(exc: BaseException) -> str:
    """Readable text for an exception, unwrapping task-group exception groups."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(describe(e) for e in exc.exceptions)
    return str(exc) or type(exc).__name__


def main() -> int:
    parser = argparse.ArgumentParser(description="Command-line Daedalus for a Pallas instance.")
    parser.add_argument("--agent", help="server_id of the agent to chat with (default: first listed)")
    parser.add_argument("--message", help="message to send to the agent")
    parser.add_argument("--bearer", help="user token, sent to agents as Authorization: Bearer")
    parser.add_argument("registry_url", help="Pallas registry base URL, e.g. http://puck.incus:23030")
    args = parser.parse_args()
    try:
        return anyio.run(run, args)
    except Exception as exc:
        print(f"daedalus: error: {describe(exc)}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
