"""Rewrite the reviewed-verdicts table of a certification's reviewer's notes (stdlib only).

    python3 certify/review-table.py DOC.md REPORT.json REVIEW.json

Replaces everything from `<!-- verdicts:begin -->` to the `Reviewed N verdicts of this report;
M do not hold.` line of DOC.md (or appends it to the notes) with the table
certify/python/verdict_rows.py makes from the JSON report and the review: every figure comes
from the report, every finding from REVIEW.json. Exits 1, naming the verdict, when a non-pass
verdict of the report has no finding in REVIEW.json: review it, then run this again.
"""
import pathlib
import re
import subprocess
import sys

doc, report, review = map(pathlib.Path, sys.argv[1:])
rows = pathlib.Path(__file__).parent / "python" / "verdict_rows.py"
made = subprocess.run([sys.executable, str(rows), str(report), str(review)], capture_output=True, text=True)
if made.returncode != 0:
    sys.exit(f"{doc}: the review table is not current: {made.stderr.strip() or made.stdout.strip()}")
table = made.stdout.strip()
text = doc.read_text()
block = re.compile(r"<!-- verdicts:begin -->.*?Reviewed \d+ verdicts of this report; \d+ do not hold\.", re.S)
if block.search(text):
    text = block.sub(lambda _: table, text)
elif "<!-- reviewer-notes -->" in text:
    text = text.rstrip("\n") + "\n\n" + table + "\n"
else:
    text = text.rstrip("\n") + "\n\n<!-- reviewer-notes -->\n\n## Reviewer's notes\n\n" + table + "\n"
doc.write_text(text)
