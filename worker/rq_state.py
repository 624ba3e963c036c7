"""What this platform reads and writes of RQ's own state in Redis, beside RQ's documented API:
the key and field names RQ 3.x uses for jobs, workers, their queues, results and cron
schedulers, in one place. The API (``api.dispatch``: is a waiting request's job abandoned?;
``api.workers``: do live workers listen?) and the worker (``worker.worker.WarmWorker``: a job
popped from one of several queues, a job given back) both use it, so that a change of RQ's
layout is met here, and by ``tests/test_rq_state.py``, which checks these names against RQ.

Each worker also writes its *process space* into its RQ worker hash (:data:`SPACE_FIELD`,
:mod:`worker.liveness`), so that a dead worker of this machine is seen at once.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from redis import Redis
from rq.cron_scheduler_registry import get_registry_key as cron_registry_key
from rq.defaults import DEFAULT_CRON_SCHEDULER_TTL
from rq.queue import Queue
from rq.results import Result
from rq.worker import Worker
from rq.worker_registration import WORKERS_BY_QUEUE_KEY

from worker import liveness

#: Field of the RQ worker hash holding the worker's process space (ours, not RQ's).
SPACE_FIELD = "process_space"


def worker_key(name: str) -> str:
    """The key of worker ``name``'s hash."""
    return Worker.redis_worker_namespace_prefix + name


def result_stream_key(job_id: str) -> str:
    """The stream RQ appends a job's results to (a failure, a timeout or a stop included)."""
    return Result.get_key(job_id)


def job_state(connection: Redis, job_key: str) -> tuple[str, str]:
    """A job's status and the name of the worker that took it ("" when none), in one round
    trip (RQ's ``Job.fetch`` reads and decodes the whole job)."""
    status, worker_name = connection.hmget(job_key, "status", "worker_name")
    return (status or b"").decode(), (worker_name or b"").decode()


def record_space(connection: Redis, key: str) -> None:
    """Write this process's space into its worker hash ``key`` (a warm worker, at birth)."""
    space = liveness.process_space()
    if space is not None:
        connection.hset(key, SPACE_FIELD, space)


def worker_identity(connection: Redis, key: str) -> tuple[int | None, bool]:
    """A worker's pid (None when its hash is gone) and whether it runs in this process space
    (only then can its pid be looked at from here)."""
    pid, space = connection.hmget(key, "pid", SPACE_FIELD)
    return (int(pid) if pid else None), liveness.of_this_space(space)


def pid_gone(pid: int | None, ours: bool) -> bool:
    """Whether a worker of pid ``pid`` (None: its hash is gone) is known dead from here: its
    hash expired, or it runs in this process space (``ours``) and its pid is gone."""
    return pid is None or (ours and liveness.process_gone(pid))


def is_dead(connection: Redis, key: str) -> bool:
    """Whether the worker of hash ``key`` is known dead (:func:`pid_gone`)."""
    return pid_gone(*worker_identity(connection, key))


def alive(connection: Redis, keys: Iterable[str]) -> set[str]:
    """The worker keys among ``keys`` whose worker is not known dead, in one round trip."""
    ordered = sorted(keys)
    with connection.pipeline(transaction=False) as pipeline:
        for key in ordered:
            pipeline.hmget(key, "pid", SPACE_FIELD)
        found = pipeline.execute()
    return {key for key, (pid, space) in zip(ordered, found, strict=True)
            if not pid_gone(int(pid) if pid else None, liveness.of_this_space(space))}


def queue_workers(connection: Redis, names: Iterable[str]) -> dict[str, set[str]]:
    """The worker keys registered on each queue of ``names``, in one round trip (RQ keeps a
    killed worker's registration until its cleanup runs)."""
    names = list(names)
    with connection.pipeline(transaction=False) as pipeline:
        for name in names:
            pipeline.smembers(WORKERS_BY_QUEUE_KEY % name)
        members = pipeline.execute()
    return {name: {key.decode() for key in keys} for name, keys in zip(names, members,
                                                                       strict=True)}


def live_cron_schedulers(connection: Redis) -> int:
    """RQ cron schedulers that sent a heartbeat within their time to live."""
    return int(connection.zcount(cron_registry_key(), time.time() - DEFAULT_CRON_SCHEDULER_TTL,
                                 "+inf"))


def forget_popped(connection: Any, queue: Queue, job_id: str) -> None:
    """Take ``job_id`` out of ``queue``'s intermediate list (``connection`` may be a
    pipeline). RQ moves a popped job there and removes it itself only for a worker of one
    queue; a worker of several that popped from one must, or RQ's cleanup fails the finished
    job later as "stuck"."""
    connection.lrem(queue.intermediate_queue_key, 1, job_id)


def give_back(connection: Redis, queue: Queue, job_id: str) -> None:
    """Put a popped job back at the front of its queue, untouched (a stop came as it was
    popped)."""
    with connection.pipeline() as pipeline:
        forget_popped(pipeline, queue, job_id)
        queue.push_job_id(job_id, pipeline=pipeline, at_front=True)
        pipeline.execute()
