"""Housekeeping jobs, enqueued on a schedule by ``worker.cron`` and run by the warm workers.

A reservation is settled by the request that made it; when that request can no longer do it
(its gunicorn worker was killed, every settling write failed) the credits would stay held
forever. :func:`release_abandoned_reservations` gives them back once the reservation is past
its deadline, with the request's line of history (failed, 0 credits, ``abandoned``).
"""

from __future__ import annotations

import functools
import logging

from crawler.config import Config
from storage import ledger
from storage.db import Database

logger = logging.getLogger(__name__)


@functools.cache
def _database(url: str, timeout: float) -> Database:
    """One engine per worker process (its connection pool serves every sweep)."""
    return Database(url, timeout)


def release_abandoned_reservations() -> int:
    """Release every reservation past its deadline; returns how many (idempotent: a second run
    finds none, and one racing a late settle loses to it cleanly)."""
    config = Config.from_env()
    released = ledger.release_expired(_database(config.database_url, config.database_timeout))
    if released:
        logger.warning("Released %d abandoned reservation(s)", released)
    return released
