"""Queue names, time budgets and the Redis connection every producer and worker shares.

Jobs are serialised as JSON (not pickle): arguments are IDs and plain values, results are
plain dicts, and nothing in Redis can execute code when loaded.
"""

from __future__ import annotations

from typing import Any

from redis import Redis
from redis.backoff import NoBackoff
from redis.connection import Encoder, HiredisRespSerializer, PythonRespSerializer
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.retry import Retry
from redis.utils import HIREDIS_AVAILABLE
from rq import Queue
from rq.serializers import JSONSerializer

from core.config import StorageConfig
from core.queues import COLLECTIONS as COLLECTIONS
from core.queues import INTERACTIVE as INTERACTIVE
from core.queues import MAINTENANCE as MAINTENANCE
from core.queues import QUEUES as QUEUES

#: Seconds a finished single-page job (its hash and result) stays in Redis: its request reads
#: it at once, and a request following the same work (``api.dispatch.follow_interactive``)
#: while the job runs, within a moment of its end; as long as the early reply
#: (``worker.replies.TTL``). It was 300 s: under load, Redis held five minutes of results
#: nobody would read again (issue 32: 23 to 117 MiB in 20 minutes).
INTERACTIVE_RESULT_TTL = 30
#: Seconds a job may sit in the queue before a worker must have taken it.
INTERACTIVE_QUEUE_TTL = 120

SERIALIZER = JSONSerializer
#: Characters from which a command's argument counts as large (see :class:`CommandPacker`).
LARGE_ARGUMENT = 64 * 1024


class CommandPacker:
    """How a Redis client writes its commands: with hiredis when it is installed (redis-py's
    default then, the quickest for the many small commands), but a command with a large
    argument with redis-py's own packer, which sends a bytes argument as it is (a str encoded
    once). hiredis copies every argument three times before anything is sent (a token, the
    formatted command, its bytes): RQ's result of a map (9 MB of base64) was four times in
    the worker at once (docs/benchmarks.md, Map speed)."""

    def __init__(self) -> None:
        self._small = HiredisRespSerializer() if HIREDIS_AVAILABLE else None
        # redis-py's own: its buffer cutoff (6000), UTF-8 as its clients encode by default
        self._large = PythonRespSerializer(6000, Encoder("utf-8", "strict", False).encode)

    def pack(self, *args: Any) -> list[bytes]:
        if self._small is not None and not any(
                isinstance(arg, str | bytes) and len(arg) > LARGE_ARGUMENT for arg in args):
            return self._small.pack(*args)
        return self._large.pack(*args)


def client_options(timeout: float) -> dict[str, Any]:
    """Options of every Redis client (RQ's, the rate limiter's, the health check's).

    A Redis that is frozen (``kill -STOP``, a stalled host) accepts connections and never
    answers: without a socket timeout each command waits for the kernel, and redis-py's default
    retries (3, with back-off up to 10 s) stretch that to 20 s and more. So: ``timeout``
    seconds to connect and per answer, and one immediate retry of a broken connection (a
    restarted Redis) but none of a timeout (a frozen one would only cost another wait). Large
    arguments are written without hiredis's copies (:class:`CommandPacker`).
    """
    return {
        "socket_connect_timeout": timeout,
        "socket_timeout": timeout,
        "retry": Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,)),
        "command_packer": CommandPacker(),
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
