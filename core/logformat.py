"""Log lines for machines: ``LOG_FORMAT=json`` makes every process write one JSON object a line
(``time``, ``level``, ``logger``, ``message``, ``process``, and where they apply
``request_id``, ``account_id``, ``job_id``, ``collection_id``); the default stays
human-readable text (:class:`core.controls.LineSafeFormatter`).

The ids come from :data:`LOG_CONTEXT`, a context variable the code serving a request or
running a job binds (:func:`bound`), so no log call has to pass them. A JSON line escapes every
control and non-ASCII character: no client text can forge or break a line.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

#: The formats of ``LOG_FORMAT``.
FORMATS = ("text", "json")
#: A text log line (``LOG_FORMAT=text``, the default) of the workers and their processes.
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
#: The ids of the work being done in this thread (a request's, a job's).
LOG_CONTEXT: ContextVar[Mapping[str, Any]] = ContextVar("log_context",
                                                        default=MappingProxyType({}))


@contextmanager
def bound(**fields: Any) -> Iterator[None]:
    """Within the block, every record of this thread carries ``fields`` (those not None)."""
    token = LOG_CONTEXT.set({**LOG_CONTEXT.get(), **{name: value for name, value
                                                     in fields.items() if value is not None}})
    try:
        yield
    finally:
        LOG_CONTEXT.reset(token)


def bind(**fields: Any) -> None:
    """Add ``fields`` to the context for the rest of the current binding (a request's
    account, known once its key is checked)."""
    LOG_CONTEXT.set({**LOG_CONTEXT.get(), **fields})


class JsonFormatter(logging.Formatter):
    """A record as one JSON object; ``fields`` of the record (``extra={"fields": …}``) and
    the bound context join it."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(
                timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname, "logger": record.name, "message": record.getMessage(),
            "process": record.process, **LOG_CONTEXT.get(), **getattr(record, "fields", {})}
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def use_json(handlers: list[logging.Handler]) -> None:
    """Give ``handlers`` the JSON format."""
    for handler in handlers:
        handler.setFormatter(JsonFormatter())
