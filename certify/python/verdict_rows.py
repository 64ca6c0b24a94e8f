"""Rows of a reviewed-verdicts table for a report's reviewer's notes (stdlib only).

    python3 verdict_rows.py REPORT.json FINDINGS.json

Prints the `<!-- verdicts:begin -->` … `<!-- verdicts:end -->` table: one row per (verdict,
check, scenario) of every fail, warn, error and inconclusive verdict, with how many such verdicts
the report holds, and the review from FINDINGS.json: a list of `{"check": ID, "scenario": GLOB,
"verdict": V (optional), "holds": "yes" | "no (…)", "finding": TEXT}`, the first match wins.
The test harness/tests/harness/profiles.rs compares the table with the report.
"""

import fnmatch
import json
import sys
from collections import Counter

report = json.load(open(sys.argv[1]))
findings = json.load(open(sys.argv[2]))
# Passes are listed only where a finding samples them (`"verdict": "pass"` with a scenario).
sampled = [(f["check"], f["scenario"]) for f in findings if f.get("verdict") == "pass"]
counts = Counter()
for s in report["scenarios"]:
    for c in s["checks"]:
        if c["verdict"] in ("fail", "warn", "error", "inconclusive") or (
                c["verdict"] == "pass" and any(fnmatch.fnmatch(c["id"], k) and fnmatch.fnmatch(s["id"], sc)
                                               for k, sc in sampled)):
            counts[(c["verdict"], c["id"], s["id"])] += 1
order = {"fail": 0, "error": 1, "warn": 2, "inconclusive": 3, "pass": 4}
rows = []
for (verdict, check, scenario), n in sorted(counts.items(), key=lambda kv: (order[kv[0][0]], kv[0][1], kv[0][2])):
    f = next((f for f in findings if fnmatch.fnmatch(check, f["check"]) and fnmatch.fnmatch(scenario, f["scenario"])
              and f.get("verdict", "pass" if verdict == "pass" else verdict) == verdict
              and (verdict != "pass" or f.get("verdict") == "pass")), None)
    if f is None:
        sys.exit(f"no finding for {verdict} {check} in {scenario}")
    rows.append(f"| {verdict} | `{check}` | `{scenario}` | {n} | {f['holds']} | {f['finding']} |")
reviewed = sum(counts.values())
unfair = sum(n for (k, n), r in zip(sorted(counts.items(), key=lambda kv: (order[kv[0][0]], kv[0][1], kv[0][2])), rows)
             if r.split("|")[5].strip().startswith("no"))
print("<!-- verdicts:begin -->")
print("| verdict | check | scenario | n | holds | finding |")
print("|---|---|---|---:|---|---|")
print("\n".join(rows))
print("<!-- verdicts:end -->")
print()
print(f"Reviewed {reviewed} verdicts of this report; {unfair} do not hold.")
