"""The operator's log lines: readable text by default, or one JSON object per line (``--log-format json``) for a
log pipeline. A line about a set carries ``set``, ``action``, ``object`` and ``reason`` as fields (the runtime logs
them as ``extra``), so a JSON consumer never parses the message; keys are printed as ``namespace/name``, never as
Python tuples."""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Hashable
from typing import Any

__all__ = ["FIELDS", "LOG_FORMATS", "JsonFormatter", "TextFormatter", "configure_logging", "key_text"]

LOG_FORMATS = ("text", "json")
FIELDS = ("set", "action", "object", "reason", "controller", "lease", "holder")


def key_text(key: Hashable) -> str:
    """A queue key as kubectl names it: ``namespace/name``."""
    if isinstance(key, tuple) and len(key) == 2:
        return f"{key[0]}/{key[1]}"
    return str(key)


def _utc(created: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(created)) + f".{int(created % 1 * 1000):03d}Z"


class JsonFormatter(logging.Formatter):
    """``{"time", "level", "logger", "msg"}`` plus whichever of ``FIELDS`` the line carries, one object per line."""

    def format(self, record: logging.LogRecord) -> str:
        doc: dict[str, Any] = {"time": _utc(record.created), "level": record.levelname.lower(),
                               "logger": record.name, "msg": record.getMessage()}
        for name in FIELDS:
            value = getattr(record, name, None)
            if value is not None:
                doc[name] = key_text(value) if name == "set" else value
        if record.exc_info:
            doc["error"] = self.formatException(record.exc_info)
        return json.dumps(doc, default=str)


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")


def configure_logging(fmt: str, level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level))
    if level != "DEBUG":
        logging.getLogger("httpx2").setLevel(logging.WARNING)  # one line per request drowns the actions
