"""Which scenario files a certification of a non-Pallas runtime runs (stdlib + PyYAML).

    python select_scenarios.py ERAS SCENARIOS_DIR

Prints one tab-separated line per file: `run PATH`, `other FOLDER` (a contract pack of another
system, or a mixed-world scenario needing its mock servers) or `skip ID PATH WHY` (written only for
an MCP era the runtime does not speak, or named in NOT_RUN). The same selection as .ci/certify-fast-agent.
"""

import os
import pathlib
import sys

import yaml

spoken = set(sys.argv[1].split(","))
root = pathlib.Path(sys.argv[2])
# NOT_RUN: newline-separated `scenario-id=why` of scenarios left out with that reason.
not_run = dict(line.split("=", 1) for line in os.environ.get("NOT_RUN", "").splitlines() if "=" in line)
other_folders = {"mcpctl", "percolate", "agentic-server", "mixed"}
pack_capabilities = {"mcpctl", "percolate", "agentic_server"}
for path in sorted(root.rglob("*.y*ml")):
    rel = path.relative_to(root)
    if path.suffix not in (".yaml", ".yml") or "targets" in rel.parts or path.name.startswith("_") \
            or any(p.startswith(".") for p in rel.parts):
        continue
    if rel.parts[0] in other_folders:
        print(f"other\t{rel.parts[0]}")
        continue
    try:
        doc = yaml.safe_load(path.read_text())
    except yaml.YAMLError:
        doc = None
    if not isinstance(doc, dict) or "id" not in doc:
        print(f"run\t{path}")  # the harness reports what is wrong with it
        continue
    servers = ((doc.get("ecosystem") or {}).get("mcp_servers") or {}).values()
    if set(map(str, doc.get("requires") or [])) & pack_capabilities \
            or any(isinstance(s, dict) and "pack" in s for s in servers):
        print(f"other\t{rel.parts[0]}")
        continue
    eras = [str(e) for e in doc.get("eras") or ["2025-11-25"]]
    if not spoken & set(eras):
        print(f"skip\t{doc['id']}\t{path}\twritten for the MCP {', '.join(eras)} era only, which its `mcp` package does not speak")
    elif doc["id"] in not_run:
        print(f"skip\t{doc['id']}\t{path}\t{not_run[doc['id']]}")
    else:
        print(f"run\t{path}")
