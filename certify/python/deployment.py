"""A scenario's deployment as the harness renders it for a runtime that reads no Pallas files.

The target profiles of Agno AgentOS and LangGraph Server render the harness's generic
deployment files (the same generators the fast-agent profiles use):

- ``fastagent.config.yaml``: ``default_model`` (``provider.model``), each provider's
  ``base_url`` (``openai:``, ``anthropic:``) and the downstream MCP servers
  (``mcp.servers.NAME.url`` and ``headers``);
- ``fastagent.secrets.yaml``: each provider's ``api_key``;
- ``agents/NAME.md``: one card per agent, YAML front matter (``name``, ``description``,
  ``model``, ``servers``, ``instance_scope``) and the instruction as body.

This module reads them into plain data; each runtime's app builds its own agents from it.
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Optional

import yaml


@dataclasses.dataclass
class Server:
    name: str
    url: str
    headers: dict


@dataclasses.dataclass
class Agent:
    name: str
    description: Optional[str]
    instruction: str
    provider: str
    model: str
    base_url: Optional[str]
    api_key: Optional[str]
    servers: list  # of Server


def _load(path: pathlib.Path) -> dict:
    if not path.exists():
        return {}
    return yaml.safe_load(path.read_text()) or {}


def read(run_dir: str) -> list:
    """Every agent of the deployment rendered into ``run_dir``, sorted by name."""
    root = pathlib.Path(run_dir)
    config = _load(root / "fastagent.config.yaml")
    secrets = _load(root / "fastagent.secrets.yaml")
    servers = {
        name: Server(name, str(s.get("url", "")), dict(s.get("headers") or {}))
        for name, s in ((config.get("mcp") or {}).get("servers") or {}).items()
    }
    agents = []
    for card in sorted((root / "agents").glob("*.md")):
        text = card.read_text()
        front, body = {}, text
        if text.startswith("---\n"):
            head, _, body = text[4:].partition("\n---\n")
            front = yaml.safe_load(head) or {}
        model = str(front.get("model") or config.get("default_model") or "openai.mock-model")
        provider, _, model_id = model.partition(".")
        if not model_id:
            provider, model_id = "openai", model
        agents.append(
            Agent(
                name=str(front.get("name") or card.stem),
                description=front.get("description"),
                instruction=body.strip() or "You are a helpful agent.",
                provider=provider,
                model=model_id,
                base_url=(config.get(provider) or {}).get("base_url"),
                api_key=(secrets.get(provider) or {}).get("api_key"),
                servers=[servers[s] for s in front.get("servers") or [] if s in servers],
            )
        )
    return agents
