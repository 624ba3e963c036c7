"""Housekeeping jobs, enqueued on a schedule by ``worker.cron`` and run by the warm workers.

A reservation is settled by the request that made it; when that request can no longer do it
(its gunicorn worker was killed, every settling write failed) the credits would stay held
forever. :func:`release_abandoned_reservations` gives them back once the reservation is past
its deadline, with the request's line of history (failed, 0 credits, ``abandoned``).

A collection runs as slice jobs that enqueue their successors; when every slice of one is lost
(its workers killed) nothing would ever run it again: :func:`look_after_collections` resumes
it, or fails it once it has made no progress for too long.

A finished collection's results are kept ``COLLECTION_RETENTION_SECONDS``:
:func:`purge_expired_collections` deletes them after that (and change tracking's page versions
not written for ``CHANGE_TRACKING_RETENTION_DAYS``).

A monitor's runs start when due: :func:`run_due_monitors` starts them.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from redis import Redis
from rq import get_current_job

from collecting import control, monitors
from core.config import Config, StorageConfig
from storage import ledger, retention
from storage.db import shared_for
from worker import queues

logger = logging.getLogger(__name__)

def release_abandoned_reservations() -> int:
    """Release every reservation past its deadline; returns how many (idempotent: a second run
    finds none, and one racing a late settle loses to it cleanly)."""
    released = ledger.release_expired(shared_for(StorageConfig.from_env()))
    if released:
        logger.warning("Released %d abandoned reservation(s)", released)
    return released


def look_after_collections(config: Config | None = None, redis: Redis | None = None
                           ) -> dict[str, int]:
    """Keep every live collection going (:func:`collecting.control.look_after`): resume one
    whose slices were all lost, fail one that made no progress for too long while no worker
    listens. Idempotent."""
    config = config or Config.from_env()
    return control.look_after(shared_for(config.storage), _redis(redis), config)


def run_due_monitors(config: Config | None = None, redis: Redis | None = None
                     ) -> dict[str, str]:
    """Start the runs of the monitors that are due (:func:`collecting.monitors.run_due`).
    Idempotent: a slot is started once, whoever runs this."""
    config = config or Config.from_env()
    return monitors.run_due(shared_for(config.storage), _redis(redis), config)


def _redis(redis: Redis | None) -> Redis:
    """``redis``, else the running job's connection, else the environment's."""
    if redis is not None:
        return redis
    job = get_current_job()
    return job.connection if job is not None else queues.redis_connection()


def purge_expired_collections(config: Config | None = None) -> int:
    """Delete the results of every collection past its ``expires_at``, and the versions of
    change tracking past ``CHANGE_TRACKING_RETENTION_DAYS``, in bounded batches; returns how
    many results (idempotent: a second run deletes nothing)."""
    config = config or Config.from_env()
    db, limits = shared_for(config.storage), config.collections
    deleted = retention.purge_expired(db, batch=limits.collection_purge_batch)
    if deleted:
        logger.info("Purged %d expired collection result(s)", deleted)
    versions = retention.purge_versions(
        db, older_than=timedelta(days=limits.change_tracking_retention_days),
        batch=limits.collection_purge_batch)
    if versions:
        logger.info("Purged %d page version(s) of change tracking", versions)
    return deleted
