#!/usr/bin/env python3
"""The verdicts that changed between two JSON reports of the same target, as Markdown (stdlib only).

    python3 changes.py OLD.json NEW.json

A verdict is identified by its scenario, check ID and title (the n-th entry of that title when a
scenario repeats one). Prints a "Changes since the last report" section: the counts before and
after, then one row per verdict that changed, with the new verdict's reason (what the run saw),
and the scenarios that appeared or disappeared.
"""

from __future__ import annotations

import json
import sys
from collections import Counter


def verdicts(report: dict) -> dict[tuple[str, str, str, int], dict]:
    out = {}
    for scenario in report.get("scenarios", []):
        seen: Counter = Counter()
        for check in scenario.get("checks", []):
            key = (scenario["id"], check["id"], check.get("title", ""))
            out[key + (seen[key],)] = check
            seen[key] += 1
    return out


def cell(text: str, limit: int = 220) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def main(old_path: str, new_path: str) -> None:
    with open(old_path, encoding="utf-8") as f:
        old = json.load(f)
    with open(new_path, encoding="utf-8") as f:
        new = json.load(f)
    before, after = verdicts(old), verdicts(new)
    keys = ("pass", "fail", "warn", "info", "inconclusive", "skip", "error")
    print("## Changes since the last report\n")
    print("| | " + " | ".join(keys) + " |")
    print("|---|" + "---:|" * len(keys))
    for name, report in (("last report", old), ("this report", new)):
        counts = report.get("counts", {})
        print(f"| {name} | " + " | ".join(str(counts.get(k, 0)) for k in keys) + " |")
    changed = []
    for key in sorted(before.keys() & after.keys()):
        was, now = before[key]["verdict"], after[key]["verdict"]
        if was != now:
            changed.append((key, was, now, after[key].get("reason", "")))
    print()
    if changed:
        print(f"{len(changed)} verdict(s) changed (the reason is what this run saw):\n")
        print("| scenario | check | title | was | now | why |")
        print("|---|---|---|---|---|---|")
        for (scenario, check, title, _), was, now, reason in changed:
            print(f"| `{scenario}` | {check} | {cell(title, 90)} | {was} | {now} | "
                  f"{cell(reason) if reason else 'the check now holds'} |")
    else:
        print("No verdict of a check present in both reports changed.")
    old_scenarios = {k[0] for k in before}
    new_scenarios = {k[0] for k in after}
    added = sorted(new_scenarios - old_scenarios)
    removed = sorted(old_scenarios - new_scenarios)
    gone = len([k for k in before.keys() - after.keys() if k[0] in new_scenarios])
    came = len([k for k in after.keys() - before.keys() if k[0] in old_scenarios])
    print()
    if added:
        print(f"New scenarios with verdicts ({len(added)}): " + ", ".join(f"`{s}`" for s in added) + ".\n")
    if removed:
        print(f"Scenarios without verdicts now ({len(removed)}): "
              + ", ".join(f"`{s}`" for s in removed) + ".\n")
    if gone or came:
        print(f"In scenarios of both reports, {came} check entr(ies) are new and {gone} are gone "
              "(renamed titles or changed scenario files).\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
