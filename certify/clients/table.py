"""Writes the certified-clients table of docs/certification/clients/README.md from the committed
JSON reports (docs/certification/clients/*.json), between its `certified:begin` and
`certified:end` markers (every figure comes from a report, none is typed by hand), and the client
checks with their rules (`pallas-conformance daedalus --list-checks`, the file given) between
`checks:begin` and `checks:end`; the same certified table in README.md between `clients:begin`
and `clients:end`."""
import json
import pathlib
import sys

root = pathlib.Path(__file__).resolve().parents[2]
docs = root / "docs/certification/clients"
readme = docs / "README.md"
rows = [
    "| client | level | passed | failed | warned | inconclusive | skipped | error | kit (commit) | report |",
    "|---|---|---:|---:|---:|---:|---:|---:|---|---|",
]
for path in sorted(docs.glob("*.json")):
    doc = json.loads(path.read_text())
    if doc.get("side") != "client":
        sys.exit(f"{path} is not a client report")
    c = doc["counts"]
    level = doc["level"]["generic"]["level"]
    rows.append(
        f"| {doc['target']} | {level} | {c['pass']} | {c['fail']} | {c['warn']} | "
        f"{c['inconclusive']} | {c['skip']} | {c['error']} | {doc['kit_version']} "
        f"`{doc.get('kit_commit', 'unknown')}` | [{path.stem}.md]({path.stem}.md) |"
    )


def between(text, name, body):
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return head + begin + "\n" + body.rstrip("\n") + "\n" + end + tail


text = between(readme.read_text(), "certified", "\n".join(rows))
text = between(text, "checks", pathlib.Path(sys.argv[1]).read_text())
readme.write_text(text)

# The same table in the repository's README, its links from there.
top = root / "README.md"
linked = [r.replace("](", "](docs/certification/clients/") if "[" in r else r for r in rows]
top.write_text(between(top.read_text(), "clients", "\n".join(linked)))
