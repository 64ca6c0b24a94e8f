#!/usr/bin/env python3
"""How many deployment starts a run could save by running scenarios one after another on one
deployment: an upper bound, from the scenario files alone (needs PyYAML).

    bench/shareable-deployments.py [SCENARIOS_DIR]      (default: scenarios)

Reads the Pallas scenarios (not `targets/`, not the other systems' packs `mcpctl/`, `percolate/`,
`agentic-server/`, `mixed/`, not `samples/` or `_`-files). Sets apart the scenarios whose verdict
reads what an earlier scenario on the same deployment would have changed: steps that reload,
signal or kill the implementation (`reload`, `process`), scrape its counters (`metrics`), read the
files it writes (`file`) or its history prompt (`history`); checks of the startup, logging and
metrics families (START, LOG, MET); assertions on its logs or its downstream sessions. Groups the
others by what their deployment is made from:

- exactly: the same `deployment`, `ecosystem` and `eras` (the mocks could be reset between
  scenarios);
- re-scripted: the same `deployment` and `eras`, and mocks of the same names, dialects and tool
  names (the mocks would have to take each scenario's script).

Prints, for each grouping, the distinct deployments and the starts saved (scenarios minus
distinct deployments). What an earlier scenario leaves inside the implementation (a `shared`-scope
history, downstream sessions opened at start) is not set apart here: the real saving is lower.
Figures, not a test.
"""
import collections
import json
import pathlib
import sys

import yaml

OTHER_SYSTEMS = {"targets", "mcpctl", "percolate", "agentic-server", "mixed", "samples"}
STATEFUL_STEPS = {"reload", "process", "metrics", "file", "history"}
STATEFUL_FAMILIES = {"START", "LOG", "MET"}
STATEFUL_ASSERTS = {"logs", "sessions"}


def actions(steps):
    for step in steps or []:
        if not isinstance(step, dict):
            continue
        yield from step
        inner = step.get("parallel")
        if isinstance(inner, dict):
            inner = inner.get("steps")
        if isinstance(inner, list):
            yield from actions(inner)


def stateful(doc):
    """Why the scenario may not run on a deployment another scenario used, if it may not."""
    used = STATEFUL_STEPS.intersection(actions(doc.get("steps")))
    if used:
        return "steps: " + ", ".join(sorted(used))
    for entry in doc.get("checks") or []:
        if not isinstance(entry, dict):
            continue
        family = str(entry.get("check") or "").split("-")[0]
        if family in STATEFUL_FAMILIES:
            return f"checks: {family}"
        asserted = entry.get("assert")
        if isinstance(asserted, dict) and STATEFUL_ASSERTS.intersection(asserted):
            return "asserts: " + ", ".join(sorted(STATEFUL_ASSERTS.intersection(asserted)))
    return None


def shape(ecosystem):
    ecosystem = ecosystem or {}
    llms = {name: (spec or {}).get("dialect") for name, spec in (ecosystem.get("llms") or {}).items()}
    servers = {
        name: sorted(str(t.get("name")) for t in (spec or {}).get("tools") or [] if isinstance(t, dict))
        for name, spec in (ecosystem.get("mcp_servers") or {}).items()
    }
    return {"llms": llms, "mcp_servers": servers}


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "scenarios")
    considered, apart = 0, collections.Counter()
    exact, rescripted = collections.Counter(), collections.Counter()
    for path in sorted(root.rglob("*.yaml")):
        rel = path.relative_to(root)
        if rel.parts[0] in OTHER_SYSTEMS or path.name.startswith("_"):
            continue
        doc = yaml.safe_load(path.read_text())
        if not isinstance(doc, dict) or "steps" not in doc or not doc.get("deployment"):
            continue
        considered += 1
        reason = stateful(doc)
        if reason:
            apart[reason.split(":")[0]] += 1
            continue
        made_of = [doc.get("deployment"), doc.get("eras")]
        exact[json.dumps(made_of + [doc.get("ecosystem")], sort_keys=True)] += 1
        rescripted[json.dumps(made_of + [shape(doc.get("ecosystem"))], sort_keys=True)] += 1
    shareable = considered - sum(apart.values())
    print(f"scenarios with a deployment  {considered}")
    print(f"set apart                    {sum(apart.values())} ({', '.join(f'{k} {v}' for k, v in sorted(apart.items()))})")
    print(f"left                         {shareable}")
    for name, groups in (("exactly", exact), ("re-scripted", rescripted)):
        sizes = sorted(groups.values(), reverse=True)
        print(f"{name:<12} {len(groups)} distinct deployments, {shareable - len(groups)} starts saved; "
              f"largest groups {sizes[:6]}")


if __name__ == "__main__":
    main()
