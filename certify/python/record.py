"""Records a certification run (stdlib only): the expected-failures baseline and this
implementation's row of the certified tables.

    python3 record.py REPORT.json BASELINE NAME PACKAGE VERSION TITLE

The certified tables of docs/certification/README.md and README.md are rebuilt from every
committed JSON report by certify/certified-table.py.
"""

import json
import pathlib
import subprocess
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

# The certified tables, rebuilt from every committed JSON report (this one included once the
# caller has copied it to docs/certification/).
subprocess.run([sys.executable, str(pathlib.Path(__file__).parent.parent / "certified-table.py"),
                "docs/certification", "README.md"], check=True)
