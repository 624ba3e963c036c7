"""Queue names, time budgets and the Redis connection every producer and worker shares.

Jobs are serialised as JSON (not pickle): arguments are IDs and plain values, results are
plain dicts, and nothing in Redis can execute code when loaded.
"""

from __future__ import annotations

from typing import Any

from redis import Redis
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.retry import Retry
from rq import Queue
from rq.serializers import JSONSerializer

from core.config import StorageConfig

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


def client_options(timeout: float) -> dict[str, Any]:
    """Options of every Redis client (RQ's, the rate limiter's, the health check's).

    A Redis that is frozen (``kill -STOP``, a stalled host) accepts connections and never
    answers: without a socket timeout each command waits for the kernel, and redis-py's default
    retries (3, with back-off up to 10 s) stretch that to 20 s and more. So: ``timeout``
    seconds to connect and per answer, and one immediate retry of a broken connection (a
    restarted Redis) but none of a timeout (a frozen one would only cost another wait).
    """
    return {
        "socket_connect_timeout": timeout,
        "socket_timeout": timeout,
        "retry": Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,)),
    }


def redis_connection(url: str | None = None, timeout: float | None = None) -> Redis:
    """A client for ``url``; by default the configuration's: ``REDIS_URL``, else the embedded
    Redis of a running ``make run`` (its URL is in ``var/redis-url``), else a local Redis.

    ``timeout`` (default ``REDIS_TIMEOUT``) bounds connecting and each answer. RQ workers
    raise the socket timeout of their own connection above their blocking dequeue; the API
    blocks on results in slices shorter than it (``api.dispatch``).
    """
    if url is None or timeout is None:
        storage = StorageConfig.from_env()
        url, timeout = url or storage.redis_url, timeout or storage.redis_timeout
    return Redis.from_url(url, **client_options(timeout))


def queue(name: str, connection: Redis) -> Queue:
    return Queue(name, connection=connection, serializer=SERIALIZER)


#: The job function the API enqueues for a page operation, by name: it never imports the
#: crawler it runs (:func:`worker.jobs.run_operation`: its name, then the URL and the
#: operation's options). A collection's slice job is :data:`collecting.control.SLICE_JOB`.
OPERATION_JOB = "worker.jobs.run_operation"
