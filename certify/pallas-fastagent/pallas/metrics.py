"""The Prometheus families of seed 001 §Metrics, process-global (`prometheus_client`)."""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_PLAIN_0_0_4, Counter, Gauge, Histogram, generate_latest
from starlette.requests import Request
from starlette.responses import Response

UP = Gauge("pallas_up", "1 while the Pallas process is running")
AGENT_INFO = Gauge("pallas_agent_info", "1 per configured agent", ["agent", "port"])
SEND_TOTAL = Counter("pallas_send_message_total", "send_message MCP calls", ["agent", "outcome"])
SEND_DURATION = Histogram(
    "pallas_send_message_duration_seconds", "End-to-end MCP send_message duration", ["agent"]
)
LLM_TURNS = Counter("pallas_llm_turns_total", "LLM provider round-trips", ["agent", "model"])
LLM_TOKENS = Counter("pallas_llm_tokens_total", "Tokens consumed", ["agent", "model", "kind"])
TOOL_CALLS = Counter(
    "pallas_tool_calls_total", "Downstream MCP operations", ["agent", "server", "operation", "outcome"]
)
TOOL_DURATION = Histogram(
    "pallas_tool_call_duration_seconds", "Downstream MCP operation duration",
    ["agent", "server", "operation"],
)
DOWNSTREAM_UP = Gauge("pallas_downstream_up", "Downstream passed the last probe", ["agent", "server"])
LLM_PROVIDER_UP = Gauge("pallas_llm_provider_up", "Active LLM provider passed its last check", ["provider"])
HEALTH_STATUS = Gauge("pallas_agent_health_status", "Last get_health: 1 ok, 0.5 degraded, 0 error", ["agent"])


async def metrics_endpoint(request: Request) -> Response:
    del request
    # seed 001: "Returns Prometheus text exposition format (`text/plain; version=0.0.4`)".
    return Response(generate_latest(), headers={"Content-Type": CONTENT_TYPE_PLAIN_0_0_4})


def record_usage(agent_name: str, turns: list) -> None:
    """Count the LLM turns a request added (seed: read from the request's UsageAccumulator)."""
    for turn in turns:
        model = str(getattr(turn, "model", "") or "unknown")
        LLM_TURNS.labels(agent_name, model).inc()
        cache = getattr(turn, "cache_usage", None)
        kinds = {
            "input": getattr(turn, "input_tokens", 0),
            "output": getattr(turn, "output_tokens", 0),
            "cache_read": getattr(cache, "cache_read_tokens", 0),
            "cache_write": getattr(cache, "cache_write_tokens", 0),
            "cache_hit": getattr(cache, "cache_hit_tokens", 0),
            "reasoning": getattr(turn, "reasoning_tokens", 0),
        }
        for kind, n in kinds.items():
            if n:
                LLM_TOKENS.labels(agent_name, model, kind).inc(n)
