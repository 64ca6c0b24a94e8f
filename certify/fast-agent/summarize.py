#!/usr/bin/env python3
"""Summarize one gather.sh output directory as Markdown facts (stdlib only).

    python3 summarize.py OUTDIR [OUTDIR...]

Reads OUTDIR/summary.txt, OUTDIR/probes/*.txt and the logs in OUTDIR/run, and prints, per
directory: status line and JSON-RPC outcome of each probe, the progress notifications of each
tool call (token, progress, total, message; whether progress strictly increases), the tools the
model was offered, what reached the fake LLM and the downstream server (protocol versions,
whether an Authorization header was forwarded), and whether a second MCP session saw the first
session's history.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def parse_probe(path: Path) -> dict:
    text = path.read_text(encoding="utf-8", errors="replace")
    _, _, response = text.partition("### response\n")
    status = ""
    headers: dict[str, str] = {}
    lines = response.splitlines()
    i = 0
    if lines and lines[0].startswith("HTTP/"):
        status = lines[0].strip()
        i = 1
        while i < len(lines) and lines[i].strip():
            key, _, value = lines[i].partition(":")
            headers[key.strip().lower()] = value.strip()
            i += 1
    body = "\n".join(lines[i:]).strip()
    messages = []
    for line in body.splitlines():
        payload = line[len("data: "):] if line.startswith("data: ") else line
        payload = payload.strip()
        if payload.startswith("{"):
            try:
                messages.append(json.loads(payload))
            except json.JSONDecodeError:
                pass
    return {"status": status, "headers": headers, "body": body, "messages": messages}


def outcome(msg: dict) -> str:
    if "error" in msg:
        err = msg["error"]
        return f"error {err.get('code')}: {str(err.get('message'))[:90]}"
    if "result" in msg:
        result = msg["result"]
        if isinstance(result, dict) and "content" in result:
            texts = [c.get("text", "") for c in result["content"] if isinstance(c, dict)]
            return f"result isError={result.get('isError')}: {' '.join(texts)[:90]!r}"
        return f"result: {json.dumps(result)[:110]}"
    return json.dumps(msg)[:110]


def load_jsonl(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def summarize(out: Path) -> str:
    lines = [f"## {out.name}", ""]
    summary = out / "summary.txt"
    if summary.exists():
        lines += ["```", summary.read_text().strip(), "```", ""]
    lines += ["| probe | HTTP | JSON-RPC outcome |", "|---|---|---|"]
    progress_blocks = []
    for path in sorted((out / "probes").glob("*.txt")):
        probe = parse_probe(path)
        name = path.stem
        final = [m for m in probe["messages"] if "id" in m]
        notes = [m for m in probe["messages"] if m.get("method") == "notifications/progress"]
        text = outcome(final[-1]) if final else (probe["body"][:90].replace("\n", " ") or "(empty)")
        if notes:
            text += f" (+{len(notes)} progress)"
        status = probe["status"].replace("HTTP/1.1 ", "")
        lines.append(f"| {name} | {status} | {text.replace('|', '/')} |")
        if notes:
            values = [n["params"].get("progress") for n in notes]
            increasing = all(b > a for a, b in zip(values, values[1:]))
            block = [f"### {name}: {len(notes)} notifications, strictly increasing: {increasing}", "",
                     "| # | progressToken | progress | total | message |", "|---|---|---|---|---|"]
            for k, n in enumerate(notes, 1):
                p = n["params"]
                block.append(f"| {k} | {json.dumps(p.get('progressToken'))} | {p.get('progress')} | "
                             f"{p.get('total', '—')} | {p.get('message')} |")
            progress_blocks.append("\n".join(block))
    lines.append("")
    lines += progress_blocks and (["\n\n".join(progress_blocks), ""])

    llm = load_jsonl(out / "run" / "llm-requests.jsonl")
    posts = [r for r in llm if r["method"] == "POST"]
    if posts:
        body = posts[0]["body"]
        tools = [(t.get("function") or {}).get("name") for t in body.get("tools") or []]
        lines += [f"LLM: {len(posts)} POST {sorted({r['path'] for r in posts})}; model={body.get('model')!r}; "
                  f"stream={body.get('stream')}; Authorization sent: "
                  f"{all('authorization' in {k.lower() for k in r['headers']} for r in posts)}",
                  f"Tools offered to the model: {tools}", ""]
        second = [r for r in posts if any(m.get("content") == "second session"
                                          for m in r["body"].get("messages", []) if m.get("role") == "user")]
        if second:
            users = [m.get("content") for m in second[0]["body"]["messages"] if m.get("role") == "user"]
            lines += [f"Second MCP session: first LLM request carries {len(users)} user message(s) "
                      f"(history shared across sessions: {len(users) > 1})", ""]
    down = load_jsonl(out / "run" / "downstream-requests.jsonl")
    if down:
        versions = sorted({str(r["headers"].get("mcp-protocol-version")) for r in down})
        auth = sorted({str(r["headers"].get("authorization")) for r in down})
        sessions = sorted({r["headers"].get("mcp-session-id") for r in down if r["headers"].get("mcp-session-id")})
        lines += [f"Downstream: {len(down)} requests; MCP-Protocol-Version values {versions}; "
                  f"Authorization values {auth}; {len(sessions)} session id(s)", ""]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    print("\n\n".join(summarize(Path(a)) for a in argv))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
