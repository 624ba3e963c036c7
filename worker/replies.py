"""Early replies: the return value of a job an API request waits on, sent the moment it returns.

RQ stores a job's result in the same transaction as the rest of its success bookkeeping (the
execution ended, the job's registries, its dependents, the worker's counters): some four Redis
round trips and RQ's Python around them after the job function returned, ≈ 1.5 ms that a
client at the other end of ``POST /scrape`` waits through for nothing (``bench/README.md``).

A job enqueued with ``on_success=CALLBACK`` (RQ's success callback, which RQ runs before that
bookkeeping) also gets its return value written to a stream of its own (:func:`key`), which
the waiting request reads together with RQ's result stream (``api.dispatch``). RQ's result,
registries and ``rq info`` are unchanged: this is a copy for the one reader that is in a
hurry, kept :data:`TTL` seconds (the reader is waiting already; one that missed it reads
RQ's result, kept longer). Only a success is sent early (RQ runs no success callback for a
``Retry``); failures, timeouts and stops come through RQ's result as before.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from redis import Redis
from redis.exceptions import RedisError
from rq.callbacks import Callback
from rq.job import Job

logger = logging.getLogger(__name__)

#: Seconds an early reply is kept: its reader is blocked on it when it comes.
TTL = 30
#: The stream entry's field that holds the JSON return value.
FIELD = b"value"


def key(job_id: str) -> str:
    """The Redis stream holding the early reply of job ``job_id``."""
    return f"webdata:reply:{job_id}"


def send(job: Job, connection: Redis, result: Any, *args: Any, **kwargs: Any) -> None:
    """RQ success callback: write ``result`` (JSON-serialisable, as every job result here) as
    ``job``'s reply. Never raises for Redis: a callback that raised would fail the job, and
    RQ's own result still answers the request."""
    try:
        with connection.pipeline(transaction=False) as pipeline:
            pipeline.xadd(key(job.id), {FIELD: json.dumps(result)})
            pipeline.expire(key(job.id), TTL)
            pipeline.execute()
    except RedisError as exc:
        logger.warning("No early reply for job %s: %s", job.id, exc)


#: What a job a request waits on is enqueued with: ``on_success=CALLBACK``.
CALLBACK = Callback(send)


def value(fields: dict[bytes, bytes]) -> Any:
    """The return value in a reply stream's entry (``fields`` as ``XREAD`` gives them)."""
    return json.loads(fields[FIELD])
