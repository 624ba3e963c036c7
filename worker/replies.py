"""Early replies: the return value of a job an API request waits on, sent the moment it returns.

RQ stores a job's result in the same transaction as the rest of its success bookkeeping (the
execution ended, the job's registries, its dependents, the worker's counters): some four Redis
round trips and RQ's Python around them after the job function returned, ≈ 1.5 ms that a
client at the other end of ``POST /scrape`` waits through for nothing (``bench/README.md``).

A job enqueued with ``meta={META: True}`` also gets its return value written, before that
bookkeeping, to a stream of its own (:func:`key`), which the waiting request reads together
with RQ's result stream (``api.dispatch``). RQ's result, registries and ``rq info`` are
unchanged: this is a copy for the one reader that is in a hurry, kept :data:`TTL` seconds
(the reader is waiting already; one that missed it reads RQ's result, kept longer). Only a
success is sent early; failures, timeouts and stops come through RQ's result as before.
"""

from __future__ import annotations

import json
from typing import Any

from redis import Redis

#: The job meta flag asking for an early reply.
META = "early_reply"
#: Seconds an early reply is kept: its reader is blocked on it when it comes.
TTL = 30
#: The stream entry's field that holds the JSON return value.
FIELD = b"value"


def key(job_id: str) -> str:
    """The Redis stream holding the early reply of job ``job_id``."""
    return f"webdata:reply:{job_id}"


def send(connection: Redis, job_id: str, value: Any) -> None:
    """Write ``value`` (JSON-serialisable, as every job result here) as ``job_id``'s reply."""
    with connection.pipeline(transaction=False) as pipeline:
        pipeline.xadd(key(job_id), {FIELD: json.dumps(value)})
        pipeline.expire(key(job_id), TTL)
        pipeline.execute()


def value(fields: dict[bytes, bytes]) -> Any:
    """The return value in a reply stream's entry (``fields`` as ``XREAD`` gives them)."""
    return json.loads(fields[FIELD])
