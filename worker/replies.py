"""Early replies: the return value of a job an API request waits on, sent the moment it returns.

After a job function returns, RQ first ends the execution (the job's last heartbeat, a round
trip), runs the success callback, then stores the result in the same transaction as the rest
of its success bookkeeping (the job's registries, its dependents, the worker's counters): some
five Redis round trips and RQ's Python around them, ≈ 1.5 ms that a client at the other end of
``POST /scrape`` waits through for nothing (docs/benchmarks.md, Scrape latency).

A job enqueued with ``meta={WANTED: True}`` and run by a worker whose job class is
:class:`ReplyingJob` (the warm worker's) also gets its return value written, as soon as its
function has returned and its timeout can no longer strike, to a stream of its own
(:func:`key`), which the waiting request reads together with RQ's result stream
(``api.dispatch``). (A success callback of the caller's that raised would still fail the job
after its reply; the API's jobs have none.) RQ's result, registries, callbacks and
``rq info`` are unchanged: this is a copy for the one reader that is in a hurry, kept
:data:`TTL` seconds (the reader is waiting already; one that missed it reads RQ's result, kept
longer). Only a returned value is sent early (not a ``Retry``); failures, timeouts and stops
come through RQ's result as before, and so does everything a worker of another job class runs.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from redis.exceptions import RedisError
from rq import Retry
from rq.job import Job, JobStatus

logger = logging.getLogger(__name__)

#: Seconds an early reply is kept: its reader is blocked on it when it comes.
TTL = 30
#: The stream entry's field that holds the JSON return value.
FIELD = b"value"
#: The ``Job.meta`` key of a job whose value is wanted early.
WANTED = "webdata_reply"
#: The ``Job.meta`` key of ``[key, member]``: a member of a sorted set that the reply removes
#: in its own round trip (the waiting request's slot of its account, ``api.inflight``).
GIVES_BACK = "webdata_gives_back"


def key(job_id: str) -> str:
    """The Redis stream holding the early reply of job ``job_id``."""
    return f"webdata:reply:{job_id}"


def send(job: Job, *args: Any, **kwargs: Any) -> None:
    """Write the job's result, the last of ``args`` (JSON-serialisable, as every job result
    here), as ``job``'s reply: ``send(job, result)``.

    Also RQ's success callback of jobs enqueued by an API of before 2026-11-26, which RQ calls
    ``(job, connection, result)``: a worker upgraded while such jobs wait must not fail them.
    Never raises for Redis: the job has succeeded, and RQ's own result still answers the
    request."""
    try:
        with job.connection.pipeline(transaction=False) as pipeline:
            pipeline.xadd(key(job.id), {FIELD: json.dumps(args[-1])})
            pipeline.expire(key(job.id), TTL)
            if gives_back := job.meta.get(GIVES_BACK):
                pipeline.zrem(*gives_back)
            pipeline.execute()
    except RedisError as exc:
        logger.warning("No early reply for job %s: %s", job.id, exc)


class ReplyingJob(Job):
    """RQ's job, keeping its return value for an early reply when it was enqueued asking for
    one (``meta={WANTED: True}``); the worker sends it (:meth:`reply`) the moment the job is
    out of its timeout's reach, before RQ's bookkeeping."""

    _reply: Any = None
    _reply_due = False

    def perform(self) -> Any:
        value = super().perform()
        if self.meta.get(WANTED) and not isinstance(value, Retry):
            self._reply, self._reply_due = value, True
        return value

    def reply(self) -> None:
        """Send the kept value (:func:`send`), once, unless the job ended failed: its
        timeout or a stop may still have struck after the function returned."""
        if self._reply_due and self.get_status(refresh=False) != JobStatus.FAILED:
            send(self, self._reply)
        self._reply, self._reply_due = None, False


def value(fields: dict[bytes, bytes]) -> Any:
    """The return value in a reply stream's entry (``fields`` as ``XREAD`` gives them)."""
    return json.loads(fields[FIELD])
