"""Housekeeping jobs, enqueued on a schedule by ``worker.cron`` and run by the warm workers.

A reservation is settled by the request that made it; when that request can no longer do it
(its gunicorn worker was killed, every settling write failed) the credits would stay held
forever. :func:`release_abandoned_reservations` gives them back once the reservation is past
its deadline, with the request's line of history (failed, 0 credits, ``abandoned``).

A collection runs as slice jobs that enqueue their successors; when every slice of one is lost
(its workers killed) nothing would ever run it again: :func:`look_after_collections` resumes
it, or fails it once it has made no progress for too long.

A finished collection's results are kept ``COLLECTION_RETENTION_SECONDS``:
:func:`purge_expired_collections` deletes them after that.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from redis import Redis
from rq import Worker, get_current_job
from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus

from core.config import Config
from crawler.frontier import Frontier
from storage import collections, ledger, retention
from storage.db import shared
from storage.models import CollectionStatus
from worker import queues, rq_state
from worker.webhooks import announce

logger = logging.getLogger(__name__)

#: ``stop_reason`` of a collection failed for making no progress (see
#: :func:`look_after_collections`).
STALLED = "stalled"


def release_abandoned_reservations() -> int:
    """Release every reservation past its deadline; returns how many (idempotent: a second run
    finds none, and one racing a late settle loses to it cleanly)."""
    config = Config.from_env()
    released = ledger.release_expired(shared(config.database_url, config.database_timeout))
    if released:
        logger.warning("Released %d abandoned reservation(s)", released)
    return released


def look_after_collections(config: Config | None = None, redis: Redis | None = None
                           ) -> dict[str, int]:
    """Keep every live collection going: one whose slice jobs all vanished (their workers
    were killed, or Redis lost them) gets a new slice, so the next worker resumes it; one that
    made no progress for ``COLLECTION_STALL_SECONDS`` while no worker listens to the
    ``collections`` queue is failed with ``stop_reason: "stalled"``. Idempotent."""
    config = config or Config.from_env()
    if redis is None:
        job = get_current_job()
        redis = job.connection if job is not None else queues.redis_connection()
    db = shared(config.database_url, config.database_timeout)
    report = {"resumed": 0, "stalled": 0}
    # A slice waiting its turn behind other collections is not stalled; one that no worker
    # will ever take (none listens to the queue) is, after the stall time.
    workers = Worker.count(queue=queues.queue(queues.COLLECTIONS, redis))
    for collection_id in collections.running(db):
        frontier = Frontier(redis, collection_id)
        alive = [job_id for job_id in frontier.slices() if _slice_alive(redis, job_id)]
        for job_id in frontier.slices() - set(alive):
            frontier.drop_slice(job_id)
        if not alive:
            logger.warning("Collection %s has no live slice: resuming it", collection_id)
            queues.enqueue_slice(redis, collection_id, config)
            report["resumed"] += 1
        elif frontier.idle_for() > config.collection_stall_seconds and not workers:
            retention = timedelta(seconds=config.collection_retention_seconds)
            if collections.finish(db, collection_id, CollectionStatus.FAILED,
                                  retention=retention, stop_reason=STALLED):
                logger.error("Collection %s made no progress for %d s: failed", collection_id,
                             config.collection_stall_seconds)
                report["stalled"] += 1
                announce(redis, collection_id)
            frontier.linger()
    return report


def _slice_alive(redis: Redis, job_id: str) -> bool:
    """Whether slice job ``job_id`` waits in its queue or runs on a live worker."""
    try:
        job = Job.fetch(job_id, connection=redis, serializer=queues.SERIALIZER)
    except NoSuchJobError:
        return False
    status = job.get_status(refresh=False)
    if status in (JobStatus.QUEUED, JobStatus.SCHEDULED, JobStatus.DEFERRED):
        return True
    if status != JobStatus.STARTED or not job.worker_name:
        return False
    return not rq_state.is_dead(redis, rq_state.worker_key(job.worker_name))


def purge_expired_collections(config: Config | None = None) -> int:
    """Delete the results of every collection past its ``expires_at``, in bounded batches;
    returns how many (idempotent: a second run deletes nothing)."""
    config = config or Config.from_env()
    deleted = retention.purge_expired(shared(config.database_url, config.database_timeout),
                                      batch=config.collection_purge_batch)
    if deleted:
        logger.info("Purged %d expired collection result(s)", deleted)
    return deleted
