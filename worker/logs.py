"""The log of a worker process and of the cron scheduler, on stderr: records no job can forge
a line of (:class:`core.controls.LineSafeFormatter`), as text or, with ``LOG_FORMAT=json``,
one JSON object a line (:mod:`core.logformat`)."""

from __future__ import annotations

import logging

from rq.logutils import colorizer

from core.config import LogConfig
from core.controls import guard_handlers
from core.logformat import TEXT_FORMAT, use_json

#: RQ's loggers, which have handlers of their own when RQ set them up first (``rq
#: worker-pool``) and do not pass their records on to the root logger then.
RQ_LOGGERS = ("rq.worker", "rq.job")


def configure(level: str | int, log_format: str | None = None) -> None:
    """Log at ``level`` through the root logger's handler, guarded, as RQ's and Scrapy's
    records are too (RQ adds no handler of its own when the root has one). RQ colours its
    lines with ANSI escapes on a terminal; the guard would show those escaped like any other,
    so RQ is told not to colour. Called again (``WarmWorker.work``, also when ``rq
    worker-pool`` configured the logging) it only guards what is there. ``log_format``:
    ``text`` or ``json`` (default: ``LOG_FORMAT``)."""
    logging.basicConfig(level=level, format=TEXT_FORMAT)
    if (log_format or LogConfig.from_env().log_format) == "json":
        use_json([handler for name in ("", *RQ_LOGGERS)
                  for handler in logging.getLogger(name).handlers])
    guard_handlers([logging.getLogger(name) for name in RQ_LOGGERS])
    colorizer.notty = True
