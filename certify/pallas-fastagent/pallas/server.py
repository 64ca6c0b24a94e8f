"""CLI entry point (`pallas`, `python -m pallas.server`): configuration loading, preflight, model
registration and the agents' lifecycle (seed 001 §Pallas Internal Architecture, §Startup Sequence)."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import logging
import os
import sys
from pathlib import Path
from typing import Any

import httpx
import uvicorn
import yaml

from pallas.log import setup_logging

log = logging.getLogger("pallas.server")

READY_TIMEOUT = 60.0  # "Wait for each subagent to become ready (HTTP probe on /mcp, 60s timeout)"
BIND_HOST = "0.0.0.0"  # "Bind to 0.0.0.0:<port> and serve StreamableHTTP"


class ConfigError(Exception):
    pass


def _load_yaml(path: Path) -> dict:
    if not path.exists():
        return {}
    doc = yaml.safe_load(path.read_text()) or {}
    if not isinstance(doc, dict):
        raise ConfigError(f"{path}: not a mapping")
    return doc


def _load_deployment_config(path: Path) -> dict:
    try:
        doc = yaml.safe_load(path.read_text())
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e}") from e
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: invalid YAML: {e}") from e
    if not isinstance(doc, dict):
        raise ConfigError(f"{path}: not a mapping")
    if not doc.get("name"):
        raise ConfigError(f"{path}: `name` is required")
    agents = doc.get("agents")
    if not isinstance(agents, dict) or not agents:
        raise ConfigError(f"{path}: `agents` must list at least one agent")
    for key, agent in agents.items():
        if not isinstance(agent, dict):
            raise ConfigError(f"{path}: agents.{key} must be a mapping")
        if not agent.get("module"):
            raise ConfigError(f"{path}: agents.{key}.module is required")
        if not isinstance(agent.get("port"), int):
            raise ConfigError(f"{path}: agents.{key}.port is required (an integer)")
        for dep in agent.get("depends_on") or []:
            if dep not in agents:
                raise ConfigError(f"{path}: agents.{key}.depends_on names unknown agent `{dep}`")
    doc.setdefault("registry_port", 24200)
    return doc


def _build_agents_table(deployment: dict) -> dict[str, tuple[str, int]]:
    return {k: (a["module"], a["port"]) for k, a in deployment["agents"].items()}


def _build_agent_deps(deployment: dict) -> dict[str, list[str]]:
    return {k: list(a.get("depends_on") or []) for k, a in deployment["agents"].items()}


def _register_unknown_models(config: dict) -> None:
    from fast_agent.llm.model_database import ModelDatabase, ModelParameters

    model = str(config.get("default_model") or "")
    name = model.partition(".")[2] or model
    if not name or ModelDatabase.get_model_params(name) is not None:
        return
    caps = config.get("model_capabilities") or {}
    ModelDatabase.register_runtime_model_params(name, ModelParameters(
        context_window=int(caps.get("context_window", 131072)),
        max_output_tokens=int(caps.get("max_output_tokens", 16384)),
        tokenizes=ModelDatabase.QWEN_MULTIMODAL if caps.get("vision") else ModelDatabase.TEXT_ONLY,
    ))
    log.info("registered model %s with fast-agent's ModelDatabase", name)


class Pallas:
    def __init__(self, deployment: dict, config: dict, secrets: dict) -> None:
        from pallas.health import LlmHealth

        self.deployment = deployment
        self.config = config
        self.agents = _build_agents_table(deployment)
        self.deps = _build_agent_deps(deployment)
        self.llm = LlmHealth(config, secrets)
        self.prefix = f"[{deployment['name']}]"

    async def _preflight(self) -> None:
        _register_unknown_models(self.config)
        await self.llm.preflight()

    def _resolve_downstream_servers(self, servers: list[str]) -> dict[str, dict]:
        configured = (self.config.get("mcp") or {}).get("servers") or {}
        return {n: configured[n] for n in servers if isinstance(configured.get(n), dict)}

    def _preflight_mcp_servers(self, name: str, downstream: dict[str, dict]) -> None:
        from pallas.health import unset_vars

        for server, cfg in downstream.items():
            for var in unset_vars(cfg.get("headers") or {}):
                log.warning("%s agent %s: downstream %s auth header references unset variable %s",
                            self.prefix, name, server, var)

    async def _defer_unreachable(self, name: str, fast: Any) -> None:
        """fast-agent aborts an agent whose downstream fails to connect at startup; Pallas must keep
        serving it and report `degraded` (seed 000 §2). A downstream that fails the health probe now
        is started with fast-agent's `load_on_start: false` (its tools stay unavailable until the
        next start); `get_health` keeps reporting it."""
        from pallas.health import probe

        settings = getattr(fast.app, "_config_or_path", None)
        configured = getattr(getattr(settings, "mcp", None), "servers", None) or {}
        names = [n for n in configured if configured[n].load_on_start]
        agent_servers = {s for a in fast.agents.values() for s in (a.get("config").servers or [])} \
            if isinstance(getattr(fast, "agents", None), dict) else set(names)
        names = [n for n in names if n in agent_servers]
        raw = self._resolve_downstream_servers(names)
        results = await asyncio.gather(*(probe(n, raw[n]) for n in names if n in raw))
        for n, up in zip([n for n in names if n in raw], results, strict=True):
            if not up:
                configured[n].load_on_start = False
                log.warning("%s agent %s: downstream %s unreachable at startup; started without it",
                            self.prefix, name, n)

    async def _start_agent(self, name: str) -> None:
        from pallas.health import register_health_tool
        from pallas.multimodal_server import MultimodalAgentMCPServer

        module_path, port = self.agents[name]
        fast = importlib.import_module(module_path).fast
        scope = self.deployment["agents"][name].get("instance_scope") or "shared"
        try:
            await self._defer_unreachable(name, fast)
        except Exception:
            log.exception("%s agent %s: startup probe of the downstream servers failed", self.prefix, name)
        async with fast.run():
            primary = fast._server_managed_instances[0]
            agent_name = name if name in primary.agents else next(iter(primary.agents))
            agent = primary.agents[agent_name]
            servers = list(getattr(getattr(agent, "config", None), "servers", None) or [])
            downstream = self._resolve_downstream_servers(servers)
            registry = fast.app.context.server_registry
            forward = {
                s: registry.get_server_config(s)
                for s in servers
                if self._forwards(s) and registry.get_server_config(s) is not None
            }
            server = MultimodalAgentMCPServer(
                primary_instance=primary,
                create_instance=fast._server_instance_factory,
                dispose_instance=fast._server_instance_dispose,
                instance_scope=scope,
                server_name=name,
                host=BIND_HOST,
                agent_name=agent_name,
                forward_configs=forward,
            )
            self._preflight_mcp_servers(name, downstream)
            register_health_tool(server, name, downstream, self.llm)
            log.info("%s agent %s listening on %s:%d (module %s, scope %s)",
                     self.prefix, name, BIND_HOST, port, module_path, scope)
            await server.run_async(transport="http", host=BIND_HOST, port=port)

    @staticmethod
    def _forwards(server: str) -> bool:
        from pallas import _fastagent_patch

        return _fastagent_patch.forwards(server)

    async def _wait_ready(self, name: str) -> None:
        url = f"http://127.0.0.1:{self.agents[name][1]}/mcp"
        deadline = asyncio.get_running_loop().time() + READY_TIMEOUT
        async with httpx.AsyncClient(timeout=2.0) as client:
            while asyncio.get_running_loop().time() < deadline:
                try:
                    await client.get(url)
                    log.info("%s subagent %s is ready", self.prefix, name)
                    return
                except httpx.HTTPError:
                    await asyncio.sleep(0.2)
        log.warning("%s subagent %s not ready after %.0fs", self.prefix, name, READY_TIMEOUT)

    async def _guarded(self, name: str) -> None:
        try:
            await self._start_agent(name)
        except (Exception, SystemExit):
            log.exception("%s agent %s failed to start", self.prefix, name)

    async def run_registry(self) -> None:
        from pallas.registry import build_app

        port = int(self.deployment["registry_port"])
        config = uvicorn.Config(build_app(self.deployment, self.config), host=BIND_HOST, port=port,
                                log_config=None, lifespan="off")
        log.info("%s registry listening on %s:%d", self.prefix, BIND_HOST, port)
        await uvicorn.Server(config).serve()

    async def _start_all(self) -> None:
        from pallas import metrics

        metrics.UP.set(1)
        for name, (_, port) in self.agents.items():
            metrics.AGENT_INFO.labels(name, str(port)).set(1)
        await self._preflight()
        tasks = [asyncio.create_task(self.run_registry())]
        subagents = [n for n in self.agents if any(n in d for d in self.deps.values())]
        for name in subagents:
            tasks.append(asyncio.create_task(self._guarded(name)))
        for name in subagents:
            await self._wait_ready(name)
        for name in self.agents:
            if name not in subagents:
                tasks.append(asyncio.create_task(self._guarded(name)))
        await asyncio.gather(*tasks)

    async def _run_single(self, name: str) -> None:
        from pallas import metrics

        metrics.UP.set(1)
        metrics.AGENT_INFO.labels(name, str(self.agents[name][1])).set(1)
        await self._preflight()
        await self._start_agent(name)


def _load_dotenv() -> None:
    """`.env` from the working directory into os.environ, without overwriting."""
    from dotenv import dotenv_values

    for key, value in dotenv_values(".env").items():
        if value is not None and key not in os.environ:
            os.environ[key] = value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pallas", description="Serve fast-agent agents over MCP")
    parser.add_argument("--agent", help="start a single agent (no registry)")
    args = parser.parse_args(argv)
    _load_dotenv()
    try:
        config = _load_yaml(Path("fastagent.config.yaml"))
        secrets = _load_yaml(Path("fastagent.secrets.yaml"))
    except (ConfigError, yaml.YAMLError, OSError) as e:
        print(f"pallas: {e}", file=sys.stderr)
        return 1
    setup_logging((config.get("logger") or {}).get("level"))
    sys.path.insert(0, os.getcwd())
    try:
        deployment = _load_deployment_config(Path(os.environ.get("PALLAS_AGENTS_CONFIG", "agents.yaml")))
        if args.agent and args.agent not in deployment["agents"]:
            raise ConfigError(f"no agent `{args.agent}` in the deployment")
    except ConfigError as e:
        log.error("configuration error: %s", e)
        print(f"pallas: {e}", file=sys.stderr)
        return 1
    import pallas._fastagent_patch  # noqa: F401  (installs the patches)

    pallas = Pallas(deployment, config, secrets)
    try:
        asyncio.run(pallas._run_single(args.agent) if args.agent else pallas._start_all())
    except KeyboardInterrupt:
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
