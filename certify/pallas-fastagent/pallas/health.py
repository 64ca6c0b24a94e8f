"""Two-layer health (seed 001 §Health System, seed 000 §2): the startup LLM preflight and the
runtime `get_health` MCP tool with parallel downstream probes."""

from __future__ import annotations

import asyncio
import datetime
import json
import logging
import os
import re
import time
from dataclasses import dataclass
from typing import Any

import httpx

from pallas import metrics

log = logging.getLogger("pallas.health")

PREFLIGHT_TIMEOUT = 5.0  # "5-second timeout per provider API call"
PROBE_TIMEOUT = 3.0  # "3-second timeout per downstream probe"
LLM_TTL = 60.0  # the TTL of the re-probe inside get_health (the seed names no value)
PROTOCOL_VERSION = "2025-11-25"
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def expand(value: Any) -> Any:
    """`${ENV_VAR}` placeholders expanded from the environment (seed 001 §fastagent.secrets.yaml)."""
    if isinstance(value, str):
        return _VAR.sub(lambda m: os.environ.get(m.group(1), ""), value)
    if isinstance(value, dict):
        return {k: expand(v) for k, v in value.items()}
    if isinstance(value, list):
        return [expand(v) for v in value]
    return value


def unset_vars(value: Any) -> list[str]:
    if isinstance(value, str):
        return [m.group(1) for m in _VAR.finditer(value) if not os.environ.get(m.group(1))]
    if isinstance(value, dict):
        return [v for x in value.values() for v in unset_vars(x)]
    return []


@dataclass
class ProviderCheck:
    provider: str
    ok: bool
    message: str
    checked_at: float


class LlmHealth:
    """Preflight of every provider with a key; the active one (`default_model`'s prefix) counts."""

    def __init__(self, config: dict, secrets: dict) -> None:
        self.config = config
        self.secrets = secrets
        default_model = str(config.get("default_model") or "")
        self.active, _, self.model = default_model.partition(".")
        self.results: dict[str, ProviderCheck] = {}
        self._lock = asyncio.Lock()

    def _section(self, provider: str) -> dict:
        merged: dict = {}
        for doc in (self.config, self.secrets):
            part = doc.get(provider)
            if isinstance(part, dict):
                merged.update(expand(part))
        return merged

    def _key(self, provider: str) -> str | None:
        env = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}[provider]
        return self._section(provider).get("api_key") or os.environ.get(env) or None

    async def _check(self, provider: str) -> ProviderCheck:
        key = self._key(provider)
        active = provider == self.active
        section = self._section(provider)
        try:
            async with httpx.AsyncClient(timeout=PREFLIGHT_TIMEOUT) as client:
                if provider == "openai":
                    base = section.get("base_url") or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
                    r = await client.get(f"{base.rstrip('/')}/models", headers={"Authorization": f"Bearer {key}"})
                    if r.status_code != 200:
                        return ProviderCheck(provider, False, f"{provider}: HTTP {r.status_code}", time.time())
                    ids = [m.get("id") for m in (r.json().get("data") or []) if isinstance(m, dict)]
                    if active and self.model not in ids:
                        return ProviderCheck(provider, False, f"{provider}: model '{self.model}' not found", time.time())
                else:
                    base = section.get("base_url") or "https://api.anthropic.com"
                    model = self.model if active else "claude-sonnet-4-5"
                    r = await client.get(
                        f"{base.rstrip('/')}/v1/models/{model}",
                        headers={"x-api-key": key or "", "anthropic-version": "2023-06-01"},
                    )
                    if r.status_code == 404:
                        return ProviderCheck(provider, False, f"{provider}: model '{model}' not found", time.time())
                    if r.status_code != 200:
                        return ProviderCheck(provider, False, f"{provider}: HTTP {r.status_code}", time.time())
        except (httpx.HTTPError, ValueError) as e:
            return ProviderCheck(provider, False, f"{provider}: {type(e).__name__}", time.time())
        return ProviderCheck(provider, True, f"{provider}: ok", time.time())

    async def preflight(self) -> None:
        """Warn-only: never blocks startup."""
        providers = [p for p in ("openai", "anthropic") if self._key(p) or p == self.active]
        results = await asyncio.gather(*(self._check(p) for p in providers))
        for res in results:
            self.results[res.provider] = res
            if res.ok:
                log.info("preflight %s", res.message)
            else:
                log.warning("preflight failed: %s", res.message)
        self._gauge()

    def _gauge(self) -> None:
        res = self.results.get(self.active)
        if res is not None:
            metrics.LLM_PROVIDER_UP.labels(self.active).set(1 if res.ok else 0)

    async def active_result(self) -> ProviderCheck | None:
        if self.active not in ("openai", "anthropic"):
            return None
        async with self._lock:
            res = self.results.get(self.active)
            if res is None or time.time() - res.checked_at > LLM_TTL:
                res = await self._check(self.active)
                self.results[self.active] = res
                self._gauge()
        return res


def _jsonrpc_result(response: httpx.Response) -> bool:
    ctype = response.headers.get("content-type", "")
    texts = []
    if "text/event-stream" in ctype:
        texts = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
    else:
        texts = [response.text]
    for text in texts:
        try:
            doc = json.loads(text)
        except ValueError:
            continue
        if isinstance(doc, dict) and "result" in doc:
            return True
    return False


async def probe(name: str, server: dict) -> bool:
    """MCP `initialize` to the server URL, then DELETE with its `Mcp-Session-Id`."""
    server = expand(server)
    url = server.get("url")
    if not url:
        return False
    headers = {str(k): str(v) for k, v in (server.get("headers") or {}).items()}
    headers.update({"Accept": "application/json, text/event-stream", "Content-Type": "application/json"})
    body = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                   "clientInfo": {"name": "pallas-health", "version": "1.0.0"}},
    }
    try:
        async with httpx.AsyncClient(timeout=PROBE_TIMEOUT) as client:
            r = await asyncio.wait_for(client.post(url, json=body, headers=headers), PROBE_TIMEOUT)
            ok = 200 <= r.status_code < 300 and _jsonrpc_result(r)
            session = r.headers.get("mcp-session-id")
            if session:
                delete_headers = {k: v for k, v in headers.items() if k != "Content-Type"}
                delete_headers["Mcp-Session-Id"] = session
                delete_headers["MCP-Protocol-Version"] = PROTOCOL_VERSION
                try:
                    await asyncio.wait_for(client.delete(url, headers=delete_headers), PROBE_TIMEOUT)
                except (httpx.HTTPError, TimeoutError):
                    log.debug("DELETE of the probe session to %s failed", name)
            return ok
    except (httpx.HTTPError, TimeoutError, OSError):
        return False


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def register_health_tool(server: Any, agent_name: str, downstream: dict[str, dict], llm: LlmHealth) -> None:
    """Registers `get_health` on the agent's MCP server: no LLM invocation, probes in parallel."""

    async def get_health() -> str:
        names = list(downstream)
        reachable = await asyncio.gather(*(probe(n, downstream[n]) for n in names))
        for n, up in zip(names, reachable, strict=True):
            log.debug("probe of %s for %s: %s", n, agent_name, "reachable" if up else "unreachable")
            metrics.DOWNSTREAM_UP.labels(agent_name, n).set(1 if up else 0)
        problems = []
        down = [n for n, up in zip(names, reachable, strict=True) if not up]
        if down:
            problems.append("Unreachable: " + ", ".join(down))
        res = await llm.active_result()
        if res is not None and not res.ok:
            problems.append(f"LLM: {res.message}")
        doc: dict[str, str] = {"status": "degraded" if problems else "ok", "timestamp": _now()}
        if problems:
            doc["message"] = "; ".join(problems)
        metrics.HEALTH_STATUS.labels(agent_name).set(0.5 if problems else 1)
        return json.dumps(doc)

    tool = server.mcp_server.tool(
        name="get_health",
        description="Returns the health status of this agent and its downstream dependencies.",
        output_schema=None,
    )(get_health)
    params = getattr(tool, "parameters", None)
    if isinstance(params, dict):
        params["additionalProperties"] = False
