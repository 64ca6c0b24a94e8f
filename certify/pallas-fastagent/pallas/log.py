"""JSON log configuration (seed 001, Incidents §4 and §5: the logging knobs)."""

from __future__ import annotations

import datetime
import json
import logging
import logging.handlers
import os
import sys
from pathlib import Path

# Pinned at WARNING individually (seed 001, Incidents §4).
_NOISY = (
    "openai", "openai._base_client", "anthropic", "anthropic._base_client", "sse_starlette",
    "sse_starlette.sse", "mcp", "mcp.client", "mcp.server", "httpx", "httpcore",
)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: `time`, `level`, `logger`, `message` (and extras)."""

    def format(self, record: logging.LogRecord) -> str:
        doc = {
            "time": datetime.datetime.fromtimestamp(record.created, datetime.UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key in ("agent", "server", "project"):
            if hasattr(record, key):
                doc[key] = getattr(record, key)
        if record.exc_info:
            doc["exc_info"] = self.formatException(record.exc_info)
        return json.dumps(doc, default=str)


def _level(name: str | None) -> int | None:
    """A Python level name (`debug`, `INFO`, `warning`…); anything else counts as unset."""
    if not name:
        return None
    value = logging.getLevelName(str(name).strip().upper())
    return value if isinstance(value, int) else None


def setup_logging(config_level: str | None) -> None:
    """`PALLAS_LOG_LEVEL` (fallback: fastagent.config.yaml `logger.level`, then INFO) for `pallas.*`;
    `PALLAS_ROOT_LOG_LEVEL` (default `max(pallas_level, INFO)`) for the root logger; the rotating
    JSON file `PALLAS_LOG_FILE` (default `~/.local/state/pallas/pallas.log`, 10 MB x 5) always
    on; `PALLAS_LOG_STDERR` adds a JSON handler on `sys.__stderr__`."""
    pallas_level = _level(os.environ.get("PALLAS_LOG_LEVEL")) or _level(config_level) or logging.INFO
    root_level = _level(os.environ.get("PALLAS_ROOT_LOG_LEVEL")) or max(pallas_level, logging.INFO)
    formatter = JsonFormatter()
    handlers: list[logging.Handler] = []
    path = Path(os.environ.get("PALLAS_LOG_FILE") or "~/.local/state/pallas/pallas.log").expanduser()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handlers.append(
            logging.handlers.RotatingFileHandler(path, maxBytes=10 * 1024 * 1024, backupCount=5)
        )
    except OSError as e:
        print(f"pallas: cannot open log file {path}: {e}", file=sys.__stderr__)
    if os.environ.get("PALLAS_LOG_STDERR"):
        handlers.append(logging.StreamHandler(stream=sys.__stderr__))
    root = logging.getLogger()
    for h in handlers:
        h.setFormatter(formatter)
        h.setLevel(min(pallas_level, root_level))
        root.addHandler(h)
    root.setLevel(root_level)
    logging.getLogger("pallas").setLevel(pallas_level)
    for name in _NOISY:
        logging.getLogger(name).setLevel(logging.WARNING)
