"""The checks on which two runs of the same scenarios disagree, as a Markdown table.

    python disagreements.py reference.json pallas-fastagent.json

A check is keyed by (scenario, check ID, title, location): a scenario may hold the same ID more
than once. Verdicts are compared as reported (a baselined failure counts as `fail`).
"""

import json
import sys


def verdicts(path):
    out = {}
    for s in json.load(open(path))["scenarios"]:
        for c in s.get("checks", []):
            key = (s["id"], c["id"], c.get("title", ""), c.get("location", ""))
            v = c.get("verdict")
            out[key] = ("fail" if v == "baselined" else v, c.get("reason", ""))
    return out


def main(a_path, b_path):
    a, b = verdicts(a_path), verdicts(b_path)
    rows = []
    for key in sorted(set(a) | set(b)):
        va, vb = a.get(key, ("—", "")), b.get(key, ("—", ""))
        if va[0] != vb[0]:
            rows.append((key, va, vb))
    print("| scenario | check | title | reference | pallas-fastagent | pallas-fastagent's reason |")
    print("|---|---|---|---|---|---|")
    for (sid, cid, title, _), va, vb in rows:
        reason = vb[1].replace("|", "\\|").replace("\n", " ")[:160]
        print(f"| `{sid}` | {cid} | {title.replace('|', '/')} | {va[0]} | {vb[0]} | {reason} |")
    print(f"\n{len(rows)} disagreement(s) over {len(set(a) | set(b))} check(s).", file=sys.stderr)


if __name__ == "__main__":
    main(*sys.argv[1:3])
