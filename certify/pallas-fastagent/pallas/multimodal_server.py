"""`MultimodalAgentMCPServer`: fast-agent's `AgentMCPServer` with the `send_message` tool (text and
optional images), the `{agent}_history` prompt, bearer propagation, progress in the seed's
formats and the send_message / token metrics (seed 001 §Multimodal Support, §Metrics)."""

from __future__ import annotations

import logging
import re
import time
from typing import Any

from fast_agent.mcp.server import AgentMCPServer
from fast_agent.mcp.tool_progress import MCPToolProgressManager
from fast_agent.types import RequestParams
from fastmcp import Context as MCPContext

from pallas import _fastagent_patch, metrics

log = logging.getLogger("pallas.multimodal_server")
_LOOP_STEP = re.compile(r"^step (\d+) \((llm|tool)\b.*\)$")


class SeedProgressManager(MCPToolProgressManager):
    """fast-agent's progress hook (`MCPToolProgressManager`), its messages in the patterns of
    seed 000 §4: `{server}/{tool}: started|completed|failed` and `{agent} step N (llm|tool)`."""

    def __init__(self, reporter, agent_name: str) -> None:
        super().__init__(reporter)
        self._agent = agent_name
        self._loops: set[str] = set()

    async def on_tool_start(self, tool_name, server_name, arguments, tool_use_id=None):
        if tool_name == "agent_loop":
            # The loop's own start is no message of the seed's table; its steps are.
            call_id = tool_use_id or f"agent_loop:{server_name}"
            self._loops.add(call_id)
            return call_id
        return await super().on_tool_start(tool_name, server_name, arguments, tool_use_id)

    async def on_tool_progress(self, tool_call_id, progress, total, message):
        if tool_call_id in self._loops:
            m = _LOOP_STEP.match(message or "")
            if m:
                await self._report_progress(progress, total, f"{self._agent} step {m.group(1)} ({m.group(2)})")
            return
        await super().on_tool_progress(tool_call_id, progress, total, message)

    async def on_tool_complete(self, tool_call_id, success, content, error):
        if tool_call_id in self._loops:
            self._loops.discard(tool_call_id)
            return
        label = self._tool_labels.get(tool_call_id)
        if label is None:
            return await super().on_tool_complete(tool_call_id, success, content, error)
        await self._report_progress(1.0, 1.0, f"{label}: {'completed' if success else 'failed'}")
        self._tool_labels.pop(tool_call_id, None)


def _inbound_bearer() -> str | None:
    """The bearer of the incoming MCP request, via `get_http_request()` (seed 001)."""
    try:
        from fastmcp.server.dependencies import get_http_request

        value = get_http_request().headers.get("authorization") or ""
    except RuntimeError:
        return None
    scheme, _, token = value.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


class MultimodalAgentMCPServer(AgentMCPServer):
    """One agent behind one Streamable HTTP MCP server."""

    def __init__(self, *args: Any, agent_name: str, forward_configs: dict[str, Any], **kwargs: Any) -> None:
        self._pallas_agent = agent_name
        self._forward_configs = forward_configs
        super().__init__(*args, **kwargs)
        self.mcp_server.custom_route("/metrics", methods=["GET"])(metrics.metrics_endpoint)

    def setup_tools(self) -> None:
        self.register_agent_tools(self._pallas_agent)

    def register_agent_tools(self, agent_name: str) -> None:
        if agent_name != self._pallas_agent:
            return
        self._registered_agents.add(agent_name)
        agent = self.primary_instance.agents.get(agent_name)
        description = self._agent_tool_description(agent_name, agent)

        @self.mcp_server.tool(name="send_message", description=description, output_schema=None)
        async def send_message(message: str, ctx: MCPContext, images: list[dict] | None = None) -> str:
            return await self._send_multimodal(agent_name, message, images, ctx)

        self._register_agent_history_prompt(agent_name)

    def _request_params_for_tool_call(self, ctx: MCPContext, response_mode=None) -> RequestParams:
        return RequestParams(
            tool_execution_handler=SeedProgressManager(self._build_progress_reporter(ctx), self._pallas_agent),
            emit_loop_progress=True,
        )

    async def _send_multimodal(
        self, agent_name: str, message: str, images: list[dict] | None, ctx: MCPContext
    ) -> str:
        from fast_agent.mcp.auth.context import request_bearer_token

        token = _inbound_bearer()
        log.debug("send_message to %s (%d image(s), bearer %s)", agent_name, len(images or []),
                  "present" if token else "absent")
        saved = request_bearer_token.set(token)
        published = []
        if token:
            for cfg in self._forward_configs.values():
                _fastagent_patch.publish_bearer(cfg, token)
                published.append(cfg)
        start = time.perf_counter()
        outcome = "error"
        try:
            payload: Any = message
            if images:
                payload = _with_images(message, images)
            request_params = self._request_params_for_tool_call(ctx)
            instance = await self._acquire_instance(ctx)
            agent = instance.app[agent_name]
            accumulator = getattr(agent, "usage_accumulator", None)
            seen = len(accumulator.turns) if accumulator is not None else 0
            try:
                result = await self._execute_agent_send(agent_name, agent, payload, request_params, ctx)
                outcome = "ok"
                return result
            finally:
                if accumulator is not None:
                    metrics.record_usage(agent_name, accumulator.turns[seen:])
                await self._release_instance(ctx, instance)
        finally:
            for cfg in published:
                _fastagent_patch.revoke_bearer(cfg)
            request_bearer_token.reset(saved)
            metrics.SEND_TOTAL.labels(agent_name, outcome).inc()
            metrics.SEND_DURATION.labels(agent_name).observe(time.perf_counter() - start)


def _with_images(message: str, images: list[dict]) -> Any:
    """A `PromptMessageExtended` holding the text and each image (`data`, `mime_type`)."""
    from fast_agent.types import PromptMessageExtended
    from mcp.types import ImageContent, TextContent

    content: list[Any] = [TextContent(type="text", text=message)]
    for image in images:
        content.append(
            ImageContent(
                type="image",
                data=str(image.get("data", "")),
                mimeType=str(image.get("mime_type") or image.get("mimeType") or "image/png"),
            )
        )
    return PromptMessageExtended(role="user", content=content)
