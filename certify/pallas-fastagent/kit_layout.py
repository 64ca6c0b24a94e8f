"""Turns the deployment the conformance kit renders today into seed 001's project layout.

The kit's generators write `agents.yaml` entries with `card: agents/<name>.md` (an AgentCard:
YAML front matter + instruction) where seed 001 requires `agents.<name>.module`, an importable
module holding a `fast` instance. Run in the deployment directory before `pallas`, this writes
`agents/<name>.py` from each card (a `FastAgent` and one `@fast.agent` decorator, as seed 001's
users write them) and points agents.yaml at it (`module: agents.<name>`). An entry that already
has `module:` is left as it is; its module file is written from the card only when it is missing.
Everything else in agents.yaml is kept, errors included: the Pallas must judge them itself.

When the kit renders `module:` and agent modules itself (issue 19, item 3), the profile drops
this step.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import yaml


def _card(path: Path) -> tuple[dict, str]:
    text = path.read_text()
    if not text.startswith("---"):
        return {}, text
    _, front, body = text.split("---", 2)
    return yaml.safe_load(front) or {}, body.strip()


def _module_source(name: str, card: dict, instruction: str) -> str:
    args = [f"    name={name!r},", f"    instruction={instruction or 'You are a helpful agent.'!r},"]
    args.append(f"    servers={list(card.get('servers') or [])!r},")
    if card.get("model"):
        args.append(f"    model={card['model']!r},")
    if isinstance(card.get("request_params"), dict):
        args.append(f"    request_params=RequestParams(**{card['request_params']!r}),")
    return "\n".join([
        "from fast_agent import FastAgent",
        "from fast_agent.types import RequestParams",
        "",
        f"fast = FastAgent({name!r}, parse_cli_args=False)",
        "",
        "",
        "@fast.agent(",
        *args,
        ")",
        f"async def {name}():",
        "    pass",
        "",
    ])


def main(root: Path) -> int:
    path = root / os.environ.get("PALLAS_AGENTS_CONFIG", "agents.yaml")
    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError):
        return 0  # the Pallas reports it
    agents = doc.get("agents") if isinstance(doc, dict) else None
    if not isinstance(agents, dict):
        return 0
    (root / "agents").mkdir(exist_ok=True)
    (root / "agents" / "__init__.py").touch()
    for name, entry in agents.items():
        if not isinstance(entry, dict):
            continue
        card_rel = entry.pop("card", None)
        if card_rel is not None and "module" not in entry:
            entry["module"] = f"agents.{name}"
        module = entry.get("module")
        card_path = path.parent / card_rel if card_rel else root / f"agents/{name}.md"
        if not isinstance(module, str) or not card_path.exists():
            continue
        target = root / Path(*module.split(".")).with_suffix(".py")
        card, instruction = _card(card_path)
        if card.get("instance_scope") and "instance_scope" not in entry:
            entry["instance_scope"] = card["instance_scope"]
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(_module_source(name, card, instruction))
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else ".")))
