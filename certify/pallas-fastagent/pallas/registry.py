"""The registry (seed 001 §Registry Server, seed 000 §1): a Starlette app serving
`GET /.well-known/mcp/server.json`, built from agents.yaml + fastagent.config.yaml, and `/metrics`."""

from __future__ import annotations

import datetime
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from pallas import metrics

SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"


def capabilities(config: dict) -> dict | None:
    caps = config.get("model_capabilities")
    if not isinstance(caps, dict):
        return None
    model = str(config.get("default_model") or "")
    return {
        "model": model.partition(".")[2] or model,
        "vision": bool(caps.get("vision", False)),
        "context_window": int(caps.get("context_window", 131072)),
        "max_output_tokens": int(caps.get("max_output_tokens", 16384)),
    }


def catalogue(deployment: dict, config: dict, updated_at: str) -> dict:
    prefix = deployment.get("namespace") or deployment["name"]
    host = deployment.get("host") or "localhost"
    caps = capabilities(config)
    servers = []
    for key, agent in deployment["agents"].items():
        server: dict[str, Any] = {
            "$schema": SCHEMA,
            "name": f"{prefix}/{key.replace('_', '-')}",
            "title": agent.get("title") or key.title(),
        }
        # Optional in agents.yaml, required by the MCP server schema the registry follows: the
        # title stands in when the deployment gives none.
        # The schema's maxLength is 100: a longer description is cut to fit.
        description = str(agent.get("description") or server["title"])
        server["description"] = description if len(description) <= 100 else description[:99] + "…"
        server["version"] = str(deployment.get("version") or "1.0.0")
        server["remotes"] = [{"type": "streamable-http", "url": f"http://{host}:{agent['port']}/mcp"}]
        if caps is not None:
            server["capabilities"] = caps
        servers.append({
            "server": server,
            "_meta": {"io.modelcontextprotocol.registry/official": {
                "status": "active", "updatedAt": updated_at, "isLatest": True}},
        })
    return {"servers": servers}


def build_app(deployment: dict, config: dict) -> Starlette:
    updated_at = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    async def server_json(request: Request) -> JSONResponse:
        del request
        return JSONResponse(catalogue(deployment, config, updated_at))

    return Starlette(routes=[
        Route("/.well-known/mcp/server.json", server_json, methods=["GET"]),
        Route("/metrics", metrics.metrics_endpoint, methods=["GET"]),
    ])
