"""Records a certification run (stdlib only): the expected-failures baseline and this
implementation's row of the certified tables.

    python3 record.py REPORT.json BASELINE NAME PACKAGE VERSION TITLE

The row (linked to docs/certification/NAME.md) replaces the row of the same report in the
`<!-- certified:begin -->` … `<!-- certified:end -->` table of docs/certification/README.md and of
README.md, or is added at its end; the other rows are kept.
"""

import json
import pathlib
import re
import sys

report, baseline, name, package, version, title = sys.argv[1:]
doc = json.loads(pathlib.Path(report).read_text())

failures = {}
for s in doc["scenarios"]:
    ids = sorted({c["id"] for c in s.get("checks", []) if c.get("verdict") == "fail"})
    if ids:
        failures[s["id"]] = ids
with open(baseline, "w") as f:
    f.write(f"# Expected failures of {package} {version} (profile {name}), written by\n")
    f.write(f"# `.ci/certify-{name} --update`. Why each one fails: docs/certification/{name}.md.\n")
    f.write("expected_failures:\n" if failures else "expected_failures: {}\n")
    for sid, ids in sorted(failures.items()):
        f.write(f"  {sid}: [{', '.join(ids)}]\n")

c = doc["counts"]
for readme, prefix in ((pathlib.Path("docs/certification/README.md"), ""),
                       (pathlib.Path("README.md"), "docs/certification/")):
    link = f"[{name}.md]({prefix}{name}.md)"
    row = (f"| {title} | {version} | {c['pass']} | {c['warn']} | {c['fail'] + c.get('baselined', 0)} "
           f"| {c.get('info', 0)} | {c.get('inconclusive', 0)} | {c['skip']} | {link} |")
    text = readme.read_text()
    block = re.search(r"<!-- certified:begin -->\n(.*?)<!-- certified:end -->", text, flags=re.S)
    if not block:
        sys.exit(f"error: {readme} has no certified table")
    rows = [r for r in block.group(1).splitlines() if r and not r.endswith(f"| {link} |")]
    rows.append(row)
    text = text[:block.start(1)] + "\n".join(rows) + "\n" + text[block.end(1):]
    readme.write_text(text)
