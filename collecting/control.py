"""A collection seen from outside its run loop: its slice jobs enqueued, its cancel, its end,
and the watchdog's look at it.

Crawler-free: the API process cancels here (``POST /collections/{id}/cancel`` and the
console), the slices finish here, and the maintenance job :func:`worker.maintenance.
look_after_collections` runs :func:`look_after`. Storage, the frontier in Redis and RQ only.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta
from typing import TYPE_CHECKING

from redis import Redis
from redis.exceptions import RedisError
from rq import Worker
from rq.job import Job, JobStatus

from collecting.frontier import Frontier
from collecting.skips import record_left
from core.config import Config
from storage import collections, webhooks
from storage.db import Database
from storage.models import Collection, CollectionStatus
from worker import queues, rq_state
from worker.webhooks import announce

if TYPE_CHECKING:
    from collecting.repeats import RepeatedBlocks

logger = logging.getLogger(__name__)

#: A collection's slice job, enqueued by name (the API never imports the crawler it runs).
#: Jobs queued by an older release carry ``worker.collections.run_slice``, still importable.
SLICE_JOB = "collecting.slice.run_slice"
#: Seconds a cancel waits for the slices to drop the pages they have in flight.
CANCEL_WAIT = 3.0
#: Batches of leftover URLs a cancel records itself (1,000 each); a maintenance job records
#: the rest (:func:`collecting.skips.record_rest`), by name.
CANCEL_BATCHES = 5
RECORD_REST_JOB = "collecting.skips.record_rest"
#: ``stop_reason`` of a collection failed for making no progress (see :func:`look_after`).
STALLED = "stalled"

#: The reason of a collection stopped because the balance ran out.
OUT_OF_CREDITS = "insufficient_credits"


def enqueue_slice(connection: Redis, collection_id: str, config: Config) -> Job:
    """Put one more slice of the collection on the ``collections`` queue, recorded as the
    collection's (the watchdog looks for collections without one). Its job's time: the
    slice's (collections section) and the crawls it waits for (crawler section)."""
    slice_seconds = config.collections.collection_slice_seconds
    job = queues.queue(queues.COLLECTIONS, connection).enqueue(
        SLICE_JOB, collection_id,
        job_timeout=int(slice_seconds + 2 * config.crawler.crawl_timeout + 60),
        result_ttl=600, failure_ttl=86400, description=f"collection {collection_id}")
    Frontier(connection, collection_id).add_slice(job.id)
    return job


def cancel(db: Database, redis: Redis, collection_id: str, account_id: str, *,
           retention: timedelta, request_id: str | None = None) -> Collection | None:
    """Cancel the account's collection (with its line of history), tell its slices, record
    the URLs it will not fetch, announce its webhook event; the cancelled row, or None when
    the account has no such collection. :class:`storage.collections.NotCancellable` when it
    has ended otherwise."""
    row = collections.cancel(db, collection_id, account_id, retention=retention,
                             request_id=request_id)
    if row is None:
        return None
    stop_fetching(db, redis, collection_id)
    if webhooks.may_call(row):
        webhooks.refresh_payload(db, collection_id)  # with the skips the cancel recorded
        announce(redis, collection_id)
    return collections.get(db, collection_id) or row


def stop_fetching(db: Database, redis: Redis, collection_id: str) -> None:
    """Tell the slices, wait (briefly) until they gave back their pages in flight, then record
    the URLs left as skips (:mod:`collecting.skips`: the first :data:`CANCEL_BATCHES`
    thousands here, any more by a maintenance job; a slice that stops later records what it
    gave back). The database refuses any result of a cancelled collection already: nothing
    more is stored or charged whatever happens here."""
    frontier = Frontier(redis, collection_id)
    try:
        frontier.mark("cancelled")
        deadline = time.monotonic() + CANCEL_WAIT
        while frontier.state().leased and time.monotonic() < deadline:
            time.sleep(0.05)
        if not record_left(db, frontier, collection_id, batches=CANCEL_BATCHES):
            queues.queue(queues.MAINTENANCE, redis).enqueue(
                RECORD_REST_JOB, collection_id, description=f"skips of {collection_id}")
        frontier.linger()
    except RedisError as exc:  # the slices see the status at their next store
        logger.warning("Could not signal the cancel of %s: %s", collection_id, exc)


def finish(db: Database, redis: Redis, collection_id: str, status: CollectionStatus, *,
           retention: timedelta, stop_reason: str | None = None,
           announce_webhook: bool = True) -> bool:
    """End the collection as ``status`` (the database lets exactly one terminal transition
    happen, and writes the webhook's event with it), ask for the event's first attempt, and
    let the frontier's keys expire; whether this call ended it.

    The URLs it will not fetch are recorded as skips (:mod:`collecting.skips`): those of a
    completed one before (the frontier is idle: it shows them once final), those of a stopped
    one after (then no slice can store one of them any more)."""
    frontier = Frontier(redis, collection_id)
    completed = status == CollectionStatus.COMPLETED
    if completed:
        record_left(db, frontier, collection_id)
    ended = collections.finish(db, collection_id, status, retention=retention,
                               stop_reason=stop_reason)
    if not completed:  # also when another process ended it: what this one gave back is left
        record_left(db, frontier, collection_id)
    if ended and announce_webhook:
        if not completed:
            webhooks.refresh_payload(db, collection_id)  # with the skips recorded after it
        announce(redis, collection_id)
    frontier.linger()
    return ended


def end_slice(db: Database, redis: Redis, frontier: Frontier, collection_id: str,
               config: Config, *, stopped: str | None, repeats: RepeatedBlocks | None,
               webhook: bool, job_id: str | None = None) -> None:
    """A slice's end: the collection finished (once: see :func:`finish`) when the slice was
    stopped for want of credits, or found the frontier seeded and idle (a crawl's repeated
    blocks cleaned first, over as many slices as it takes); what a stopped or cancelled slice
    gave back recorded as skipped; else a successor slice enqueued, unless the watchdog
    replaced this slice (job ``job_id``) meanwhile: held up so long it looked dead, its
    place is taken."""
    retention = config.collections.retention

    def complete(status: CollectionStatus, stop_reason: str | None = None) -> None:
        if finish(db, redis, collection_id, status, retention=retention,
                  stop_reason=stop_reason, announce_webhook=webhook):
            logger.info("Collection %s %s", collection_id, status)

    state = frontier.state()
    if stopped == OUT_OF_CREDITS:
        complete(CollectionStatus.FAILED, OUT_OF_CREDITS)
    elif stopped or state.cancelled:  # what this slice gave back is a skip
        record_left(db, frontier, collection_id)
    elif state.seeded and state.idle:
        if repeats is not None and not repeats.clean_some(db, collection_id):
            enqueue_slice(redis, collection_id, config)
            return  # the next slice goes on cleaning, then completes the crawl
        complete(CollectionStatus.COMPLETED)
    elif job_id is None or job_id in frontier.slices():
        enqueue_slice(redis, collection_id, config)
    else:
        logger.info("Slice %s of %s was replaced meanwhile: no successor", job_id,
                    collection_id)


def look_after(db: Database, redis: Redis, config: Config) -> dict[str, int]:
    """Keep every live collection going: one whose slice jobs vanished (their workers were
    killed or cut off, or Redis lost them) gets new ones, up to the slices it runs at once
    (its width: else a collection that lost a slice would crawl slower to its end, and one
    resumed after losing them all would run on one worker); one that
    made no progress for ``COLLECTION_STALL_SECONDS`` while no worker listens to the
    ``collections`` queue is failed with ``stop_reason: "stalled"``. Idempotent."""
    report = {"resumed": 0, "stalled": 0}
    limits = config.collections
    # A slice waiting its turn behind other collections is not stalled; one that no worker
    # will ever take (none listens to the queue) is, after the stall time.
    workers = Worker.count(queue=queues.queue(queues.COLLECTIONS, redis))
    for collection_id in collections.running(db):
        frontier = Frontier(redis, collection_id)
        slices = frontier.slices()
        alive = [job_id for job_id in slices if _slice_alive(redis, job_id)]
        for job_id in slices - set(alive):
            frontier.drop_slice(job_id)
        # Handed over meanwhile: a slice that ended between the two looks enqueued its
        # successor first, which the first look missed.
        alive += [job_id for job_id in frontier.slices() if job_id not in slices]
        missing = frontier.width() - len(alive)
        if missing > 0:
            logger.warning("Collection %s has %d live slice(s) of %d: %s", collection_id,
                           len(alive), frontier.width(),
                           "resuming it" if not alive else "starting the missing ones")
            for _ in range(missing):
                enqueue_slice(redis, collection_id, config)
            report["resumed"] += 1
        elif frontier.idle_for() > limits.collection_stall_seconds and not workers:
            retention = limits.retention
            if finish(db, redis, collection_id, CollectionStatus.FAILED, retention=retention,
                      stop_reason=STALLED):
                logger.error("Collection %s made no progress for %d s: failed", collection_id,
                             limits.collection_stall_seconds)
                report["stalled"] += 1
    return report


def _slice_alive(redis: Redis, job_id: str) -> bool:
    """Whether slice job ``job_id`` waits in its queue or runs on a live worker (a job gone
    from Redis has no status: not alive)."""
    status, worker_name = rq_state.job_state(redis, Job.key_for(job_id))
    if status in (JobStatus.QUEUED, JobStatus.SCHEDULED, JobStatus.DEFERRED):
        return True
    if status != JobStatus.STARTED or not worker_name:
        return False
    return not rq_state.is_dead(redis, rq_state.worker_key(worker_name))
