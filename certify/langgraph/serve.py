"""LangGraph Server (`langgraph dev`, in-memory runtime) serving a scenario's agents, for the kit.

    python certify/langgraph/serve.py RUN_DIR PORT

Writes RUN_DIR/langgraph.json with one graph per agent of the deployment the harness rendered
(certify/python/deployment.py), each a stub module calling certify/langgraph/graph.py, then
execs `langgraph dev --no-browser --no-reload --allow-blocking` on 127.0.0.1:PORT (the graph
reads the rendered files and builds its OpenAI client synchronously, which the dev server's
blocking-call detector would otherwise turn into a `BlockingError` run). LangGraph Server serves every
graph's default assistant as an MCP tool at `/mcp`. Analytics and tracing are off; nothing
leaves loopback.
"""

from __future__ import annotations

import json
import os
import pathlib
import sys

here = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(here.parent / "python"))

import deployment  # noqa: E402


def main() -> None:
    run_dir, port = pathlib.Path(sys.argv[1]).resolve(), sys.argv[2]
    graphs = {}
    stubs = run_dir / "graphs"
    stubs.mkdir(exist_ok=True)
    for a in deployment.read(str(run_dir)):
        module = stubs / f"agent_{len(graphs)}.py"
        module.write_text(
            "import sys\n"
            f"sys.path.insert(0, {str(here)!r})\n"
            "from graph import factory\n"
            f"make_graph = factory({str(run_dir)!r}, {a.name!r})\n"
        )
        graphs[a.name] = f"./graphs/{module.name}:make_graph"
    config = run_dir / "langgraph.json"
    config.write_text(json.dumps({"dependencies": ["."], "graphs": graphs}, indent=2))
    os.environ.update(
        {
            "LANGGRAPH_CLI_NO_ANALYTICS": "1",
            "LANGSMITH_TRACING": "false",
            "LANGCHAIN_TRACING_V2": "false",
        }
    )
    os.chdir(run_dir)
    langgraph = pathlib.Path(sys.executable).parent / "langgraph"
    os.execv(
        str(langgraph),
        [str(langgraph), "dev", "--no-browser", "--no-reload", "--allow-blocking", "--host", "127.0.0.1", "--port", port,
         "--config", str(config), "--server-log-level", "warning"],
    )


if __name__ == "__main__":
    main()
