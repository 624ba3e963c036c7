"""Queue names, time budgets and the Redis connection every producer and worker shares.

Jobs are serialised as JSON (not pickle): arguments are IDs and plain values, results are
plain dicts, and nothing in Redis can execute code when loaded.
"""

from __future__ import annotations

import os

from redis import Redis
from rq import Queue
from rq.serializers import JSONSerializer

#: Single-page operations; an API request is waiting on each of these.
INTERACTIVE = "interactive"
#: Background collections (crawls and batches).
COLLECTIONS = "collections"

#: Seconds RQ gives a single-page job before killing it (the crawl has its own, shorter budget).
INTERACTIVE_JOB_TIMEOUT = int(os.environ.get("INTERACTIVE_JOB_TIMEOUT", "60"))
#: Seconds a finished single-page job's result stays in Redis (the API reads it at once).
INTERACTIVE_RESULT_TTL = 300
#: Seconds a job may sit in the queue before a worker must have taken it.
INTERACTIVE_QUEUE_TTL = 120

SERIALIZER = JSONSerializer


def redis_connection(url: str | None = None) -> Redis:
    """A client for ``url`` (default ``REDIS_URL``, else a local Redis)."""
    return Redis.from_url(url or os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))


def queue(name: str, connection: Redis) -> Queue:
    return Queue(name, connection=connection, serializer=SERIALIZER)
