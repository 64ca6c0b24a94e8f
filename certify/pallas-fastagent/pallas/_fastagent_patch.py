"""Monkey-patches fast-agent at import time (seed 001, Bearer Token Propagation and Incidents §1-§2).

* Per-request bearer forwarding: a process-wide `_pending_bearers` registry keyed by
  `id(server_config)`, guarded by a `threading.Lock`; the patched `_prepare_headers_and_auth`
  gives opted-in servers a `_DynamicBearerAuth` (an `httpx.Auth` whose `auth_flow` looks the
  bearer up on every request, the `request_bearer_token` ContextVar as a fallback).
* `forward_inbound_auth: true` is read by scanning `fastagent.config.yaml` directly
  (`_FORWARD_SERVERS`), because fast-agent's pydantic config drops unknown keys.
* Trace capture and the downstream tool-call metrics around `MCPAggregator._execute_on_server`.

Each patch has its own sentinel attribute on its target, so `install()` is idempotent per patch.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import yaml

from pallas import metrics

trace = logging.getLogger("pallas.forward.trace")
log = logging.getLogger("pallas.forward")

_lock = threading.Lock()
_pending_bearers: dict[int, str] = {}


def _scan_forward_servers(path: Path) -> frozenset[str]:
    try:
        doc = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError):
        return frozenset()
    servers = ((doc.get("mcp") or {}).get("servers") or {}) if isinstance(doc, dict) else {}
    return frozenset(
        name for name, s in servers.items() if isinstance(s, dict) and s.get("forward_inbound_auth") is True
    )


_FORWARD_SERVERS: frozenset[str] = _scan_forward_servers(
    Path(os.environ.get("PALLAS_FASTAGENT_CONFIG", "fastagent.config.yaml"))
)


def forwards(server_name: str) -> bool:
    return server_name in _FORWARD_SERVERS


def publish_bearer(server_config: Any, token: str) -> None:
    with _lock:
        _pending_bearers[id(server_config)] = token


def revoke_bearer(server_config: Any) -> None:
    with _lock:
        _pending_bearers.pop(id(server_config), None)


def _lookup(server_config: Any) -> str | None:
    with _lock:
        token = _pending_bearers.get(id(server_config))
    if token:
        return token
    from fast_agent.mcp.auth.context import request_bearer_token

    return request_bearer_token.get()


class _DynamicBearerAuth(httpx.Auth):
    """Adds `Authorization: Bearer <inbound>` to each request of an opted-in server."""

    def __init__(self, server_config: Any) -> None:
        self._config = server_config

    def auth_flow(self, request: httpx.Request):
        token = _lookup(self._config)
        if token and "authorization" not in request.headers:
            request.headers["Authorization"] = f"Bearer {token}"
            log.debug("forward.applied server=%s", getattr(self._config, "name", None))
        yield request


def _patch_prepare_headers() -> None:
    from fast_agent.mcp import mcp_connection_manager as cm

    original = cm._prepare_headers_and_auth
    if getattr(original, "_pallas_forward_patched", False):
        return

    def patched(server_config, *args, **kwargs):
        prepared = original(server_config, *args, **kwargs)
        name = getattr(server_config, "name", None) or ""
        # An explicit Authorization header wins; OAuth-managed servers are left alone.
        if not forwards(name) or prepared.user_auth_keys or prepared.oauth_provider is not None:
            return prepared
        return cm.PreparedHttpAuth(
            headers=prepared.headers,
            oauth_provider=_DynamicBearerAuth(server_config),
            user_auth_keys=prepared.user_auth_keys,
        )

    patched._pallas_forward_patched = True  # type: ignore[attr-defined]
    cm._prepare_headers_and_auth = patched


_OPERATIONS = {"tools/call": "tool", "prompts/get": "prompt", "resources/read": "resource"}


def _patch_execute_on_server() -> None:
    from fast_agent.mcp.mcp_aggregator import MCPAggregator

    original = MCPAggregator._execute_on_server
    if getattr(original, "_pallas_trace_patched", False):
        return

    async def patched(self, server_name, operation_type, operation_name, *args, **kwargs):
        agent = getattr(self, "agent_name", None) or "unknown"
        # seed 001: "`operation` is the fast-agent operation type (`tool`, `prompt`, `resource`, …)";
        # fast-agent 0.7.22 names a dispatch by its MCP method (`tools/call`): the seed's names.
        operation = _OPERATIONS.get(operation_type, operation_type)
        start = time.perf_counter()
        outcome = "ok"
        try:
            result = await original(self, server_name, operation_type, operation_name, *args, **kwargs)
            trace.debug("_execute_on_server %s %s/%s done", operation_type, server_name, operation_name)
            if getattr(result, "isError", False):
                outcome = "error"
            return result
        except BaseException:
            outcome = "error"
            trace.exception("_execute_on_server %s %s/%s failed", operation_type, server_name, operation_name)
            raise
        finally:
            metrics.TOOL_CALLS.labels(agent, server_name, operation, outcome).inc()
            metrics.TOOL_DURATION.labels(agent, server_name, operation).observe(
                time.perf_counter() - start
            )

    patched._pallas_trace_patched = True  # type: ignore[attr-defined]
    MCPAggregator._execute_on_server = patched


def install() -> None:
    _patch_prepare_headers()
    _patch_execute_on_server()


install()
