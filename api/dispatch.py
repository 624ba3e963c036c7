"""Run a job on a warm worker and wait for its result, with a deadline.

The API process never crawls: it enqueues on the ``interactive`` queue and blocks (``XREAD``)
on the job's early-reply stream (:mod:`worker.replies`, written the instant the job function
returns) together with RQ's result stream (written after RQ's bookkeeping; the only one a
failure, a timeout or a stop is told on).

It blocks in short slices, not for the whole deadline at once, for two reasons:

- every Redis client has a socket timeout (``REDIS_TIMEOUT``), so that a frozen Redis is an
  answer (503) within seconds instead of a hang; a blocking read longer than it would fail;
- between slices it looks whether the job was *abandoned*: its worker died (``kill -9``, OOM)
  while running it. RQ notices that only when the job's lease in ``StartedJobRegistry``
  expires (the job timeout + 60 s: a warm worker does not heartbeat during a job), far after
  the client gave up. The job records which worker took it (``job.worker_name``) and the
  worker its pid and process space (:mod:`worker.liveness`), so a dead worker of this
  machine's process space is seen at once; any other when its key expires (RQ's worker TTL)
  or RQ marks the job failed, whichever comes first.
  A job still queued while every worker of its queue is known dead is answered the same way.

Whether workers listen at all is :mod:`api.workers`' memory: a deployment still starting (no
worker seen since this process started) makes its requests wait for the first one; one whose
workers were seen and are gone answers 503 at once.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from flask import current_app, g
from redis.exceptions import RedisError
from rq import Queue
from rq.command import send_stop_job_command
from rq.exceptions import InvalidJobOperation, NoSuchJobError
from rq.job import Job, JobStatus
from rq.results import Result

from api import workers
from api.errors import ApiError
from api.inflight import Held
from worker import queues, replies, rq_state

logger = logging.getLogger(__name__)

#: Longest single blocking read on the result stream, in seconds.
SLICE = 1.0
#: Seconds a queued job may wait with no worker at all on its queue (the last one stopped,
#: killed or shut down) before its request is answered 503: long enough for ``make run``'s
#: supervisor to start a worker again (1 s, then the worker's own start), far shorter than
#: the request's deadline, which such a request waited out before answering 504.
NO_WORKER_GRACE = 10.0
#: Statuses of a job that will never store a result now (RQ's cleanup marks abandoned ones
#: failed; a failure stores a result, but its stream may have been trimmed or expired).
ENDED = {JobStatus.FAILED, JobStatus.STOPPED, JobStatus.CANCELED}
STOPPED_MESSAGE = ("The crawler worker stopped before finishing this page; nothing was charged. "
                   "Try again shortly.")
NO_WORKER_MESSAGE = "No crawler worker is running; nothing was charged. Try again shortly."
NOT_STARTED_MESSAGE = ("No crawler worker has started yet on this deployment; nothing was "
                       "charged. Try again shortly.")


def _wait_result(job: Job, seconds: float) -> Result | Reply | None:
    """The job's early reply (:mod:`worker.replies`) or latest RQ result, whichever comes
    first, blocking at most ``seconds`` (RQ's ``Result.fetch_latest`` counts its timeout in
    whole seconds; this one in milliseconds)."""
    reply_key, result_key = replies.key(job.id), rq_state.result_stream_key(job.id)
    response = job.connection.xread({result_key: "0-0", reply_key: "0-0"},
                                    block=max(1, int(seconds * 1000)))
    if not response:
        return None
    streams = {name.decode(): entries for name, entries in response}
    if reply_key in streams:
        return Reply(replies.value(streams[reply_key][-1][1]))
    result_id, payload = streams[result_key][-1]
    return Result.restore(job.id, result_id.decode(), payload, connection=job.connection,
                          serializer=job.serializer)


class Reply(NamedTuple):
    """A successful job's return value, sent early by its worker."""

    return_value: dict[str, Any]


class Lookout:
    """Whether a waiting request's job will never finish, looked at between slices.

    Each look reads the job's status and worker in one round trip; the worker's pid and
    process space cannot change, so they are read once, when the job is first seen started,
    and later looks only ask whether the worker's key still exists and, for a worker of this
    process space, whether its pid is alive.
    """

    def __init__(self, job: Job, queue: Queue, confirm_workers: bool = False,
                 starting: bool = False):
        self.job, self.queue = job, queue
        #: The job was enqueued on a look for workers made a moment before (``seen_lately``):
        #: while still queued at the first look, it is abandoned if none listens any more.
        self._confirm_workers = confirm_workers
        #: No worker has listened on the queue since the API started: a queued job waits for
        #: the first one (no grace counted) until a worker is seen or takes it.
        self.starting = starting
        #: The started job's worker: (name, pid, whether its pid can be looked at from here).
        self._worker: tuple[str, int | None, bool] | None = None
        #: Since when the queued job's queue has had no worker at all (None: it has one).
        self._no_worker_since: float | None = None
        #: The job was still queued at the last look: no worker ever took it.
        self.queued = True

    def abandoned(self) -> str | None:
        """Why the job will never finish (its worker died, every worker of its queue died,
        RQ marked it), or None while it may."""
        confirming, self._confirm_workers = self._confirm_workers, False
        connection = self.job.connection
        status, name = rq_state.job_state(connection, self.job.key)
        self.queued = status == JobStatus.QUEUED
        if status in ENDED:
            return f"job {status}"
        if status == JobStatus.QUEUED:
            found = workers.count(connection, [self.queue.name])[self.queue.name]
            if found.alive:
                self._no_worker_since = None
                self.starting = False
                return None
            if self.starting:  # a dead worker's registration is not a deployment's end
                return None
            if found.registered:
                return "every worker of the queue died"
            if confirming:
                return "no worker listens on the queue"
            now = time.monotonic()
            self._no_worker_since = self._no_worker_since or now
            if now - self._no_worker_since >= NO_WORKER_GRACE:
                return f"no worker has listened on the queue for {NO_WORKER_GRACE:g} s"
            return None
        self.starting = False  # a worker took it
        if status != JobStatus.STARTED or not name:
            return None
        key = rq_state.worker_key(name)
        if self._worker is None or self._worker[0] != name:
            self._worker = (name, *rq_state.worker_identity(connection, key))
        _, pid, ours = self._worker
        if not connection.exists(key):
            return f"worker {name} is gone"
        if pid is not None and rq_state.pid_gone(pid, ours):
            return f"worker {name} (pid {pid}) died"
        return None


def _enqueue(queue: Queue, func: str | Callable[..., Any], args: tuple[Any, ...],
             kwargs: dict[str, Any], **options: Any) -> Job:
    """``queue.enqueue(func, *args, **kwargs, **options)`` in one transaction: RQ's own
    ``enqueue`` registers the queue in a round trip of its own before saving and pushing the
    job; given a pipeline, it does all three in it."""
    job = queue.create_job(func, args=args, kwargs=kwargs, **options)
    with queue.connection.pipeline() as pipeline:
        job = queue.enqueue_job(job, pipeline=pipeline)
        pipeline.execute()
    return job


def give_up(job: Job) -> None:
    """Stop ``job``, whose client was answered without it: cancel it while it waits in the
    queue; once started, ask its worker to stop it (RQ's stop-job command), which frees its
    slot and cancels its downloads instead of crawling on for nobody."""
    with contextlib.suppress(RedisError, InvalidJobOperation, NoSuchJobError):
        if job.get_status(refresh=True) == JobStatus.STARTED:
            send_stop_job_command(job.connection, job.id, serializer=job.serializer)
        else:
            job.cancel()


def run_interactive(
    redis: Any, func: str | Callable[..., dict[str, Any]], *args: Any, job_id: str, wait: float,
    meanwhile: Callable[[], object] | None = None, slot: Held | None = None, **kwargs: Any,
) -> dict[str, Any]:
    """The job's return value; raises ApiError 503 (no worker, no Redis, the worker died while
    running it) or 504 (too slow). While the deployment is starting (:mod:`api.workers`) the
    job waits for the first worker, within ``wait``.

    ``func`` may be a dotted name (``worker.queues.OPERATION_JOB``), which RQ imports in the
    worker.
    ``meanwhile()`` is called once the job is enqueued, before the wait: work of the request's
    that need not delay the job (it must not raise). The request's ``slot`` of its account,
    if given, is given back by the job's early reply (and marked so), in the reply's round trip.
    """
    if g.get("redis_unreachable"):  # the rate limiter just waited for it in vain
        raise ApiError("unavailable", "The job queue is unreachable; try again shortly.")
    try:
        queue = queues.queue(queues.INTERACTIVE, redis)
        trusted = workers.seen_lately(queue.name)  # then the lookout makes sure at its first look
        present = trusted or workers.listening(redis, queue.name)
        if not present and workers.ever_seen(queue.name):
            raise ApiError("unavailable", NO_WORKER_MESSAGE)
        job = _enqueue(
            queue, func, args, kwargs,
            job_id=job_id,
            timeout=current_app.config["WEBDATA"].worker.interactive_job_timeout,
            result_ttl=queues.INTERACTIVE_RESULT_TTL,
            failure_ttl=queues.INTERACTIVE_RESULT_TTL,
            ttl=queues.INTERACTIVE_QUEUE_TTL,
            meta={replies.WANTED: True,
                  **({replies.GIVES_BACK: [slot.key, slot.member]} if slot else {})},
        )
        if meanwhile is not None:
            meanwhile()
        lookout = Lookout(job, queue, confirm_workers=trusted, starting=not present)
        result = _await(job, lookout, wait, owner=True)
    except RedisError as exc:
        logger.error("Redis unavailable: %s", exc)
        raise ApiError("unavailable", "The job queue is unreachable; try again shortly.") from None
    if result is None:
        give_up(job)
        if lookout.starting:
            raise ApiError("unavailable", NOT_STARTED_MESSAGE)
        raise ApiError("timeout", f"No result within {wait:g} s; nothing was charged.")
    if not present:  # a worker answered the deployment's start: it has been seen now
        workers.saw(queue.name)
    if isinstance(result, Reply) and slot is not None:
        slot.given_back = True
    return _value(job, result)


def follow_interactive(redis: Any, job_id: str, wait: float) -> dict[str, Any] | None:
    """The return value of another request's job ``job_id`` (the same work: an answer being
    fetched for the page cache), waited for as its own request waits, at most ``wait``
    seconds; None when it gives none (there is no such job, it failed, was stopped or its
    worker died, or ``wait`` ran out): the caller then does the work itself. Never stops the
    job: it is not this request's. ApiError 503 when Redis is unreachable."""
    job = _job_soon(redis, job_id)
    if job is None:
        return None
    try:
        queue = queues.queue(queues.INTERACTIVE, redis)
        result = _await(job, Lookout(job, queue), wait, owner=False)
        return None if result is None else _value(job, result)
    except RedisError as exc:
        logger.error("Redis unavailable: %s", exc)
        raise ApiError("unavailable", "The job queue is unreachable; try again shortly.") from None
    except ApiError:
        return None


#: Seconds a follower waits for the job of the request it follows to be enqueued (that request
#: claims the work a moment before it enqueues its job).
ENQUEUE_GRACE = 2.0


def _job_soon(redis: Any, job_id: str) -> Job | None:
    """Job ``job_id``, once it exists (within :data:`ENQUEUE_GRACE`); None if it never
    does (its request failed before enqueueing, or the job expired)."""
    deadline = time.monotonic() + ENQUEUE_GRACE
    while True:
        try:
            return Job.fetch(job_id, connection=redis, serializer=queues.SERIALIZER)
        except NoSuchJobError:
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.02)


def _await(job: Job, lookout: Lookout, wait: float, *, owner: bool) -> Result | Reply | None:
    """The job's reply or result within ``wait`` seconds (None: none came); ApiError 503 when
    the lookout finds it abandoned (cancelled then, when ``owner``: still queued, no worker
    restarted later may crawl it free)."""
    deadline = time.monotonic() + wait
    slice_seconds = min(SLICE, current_app.config["WEBDATA"].storage.redis_timeout / 2)
    while (remaining := deadline - time.monotonic()) > 0:
        result = _wait_result(job, min(slice_seconds, remaining))
        if result is not None:
            return result
        reason = lookout.abandoned()
        if reason is not None:
            result = _wait_result(job, 0.001)  # it may have answered just before
            if result is not None:
                return result
            logger.error("Job %s abandoned: %s", job.id, reason)
            if owner:
                with contextlib.suppress(RedisError):
                    job.cancel()
            raise ApiError("unavailable",
                           NO_WORKER_MESSAGE if lookout.queued else STOPPED_MESSAGE)
    return None


def _value(job: Job, result: Result | Reply) -> dict[str, Any]:
    """The return value a reply or a result carries; ApiError for a failed job."""
    if isinstance(result, Reply) or result.type == Result.Type.SUCCESSFUL:
        return result.return_value
    reason = result.exc_string or ""
    if "JobTimeoutException" in reason:
        raise ApiError("timeout", "The page took too long to process; nothing was charged.")
    if "AbandonedJobError" in reason:
        raise ApiError("unavailable", STOPPED_MESSAGE)
    logger.error("Job %s failed: %s", job.id, reason[-2000:])
    raise ApiError("internal_error", "The worker failed on this page; nothing was charged.")
