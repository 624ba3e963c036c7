"""Queue names, time budgets and the Redis connection every producer and worker shares.

Jobs are serialised as JSON (not pickle): arguments are IDs and plain values, results are
plain dicts, and nothing in Redis can execute code when loaded.
"""

from __future__ import annotations

from redis import Redis
from rq import Queue
from rq.serializers import JSONSerializer

from crawler.config import Config

#: Single-page operations; an API request is waiting on each of these.
INTERACTIVE = "interactive"
#: Background collections (crawls and batches).
COLLECTIONS = "collections"
#: Housekeeping the cron scheduler enqueues (``worker.cron``): short jobs, no crawling.
MAINTENANCE = "maintenance"

#: Seconds a finished single-page job's result stays in Redis (the API reads it at once).
INTERACTIVE_RESULT_TTL = 300
#: Seconds a job may sit in the queue before a worker must have taken it.
INTERACTIVE_QUEUE_TTL = 120

SERIALIZER = JSONSerializer


def redis_connection(url: str | None = None) -> Redis:
    """A client for ``url``; by default the configuration's: ``REDIS_URL``, else the embedded
    Redis of a running ``make run`` (its URL is in ``var/redis-url``), else a local Redis."""
    return Redis.from_url(url or Config.from_env().redis_url)


def queue(name: str, connection: Redis) -> Queue:
    return Queue(name, connection=connection, serializer=SERIALIZER)
