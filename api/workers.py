"""What an API process knows of the workers: how many live ones listen on each queue now, and
whether one has listened on a queue since the process started.

A deployment is *starting* until its API process has seen a live worker on the ``interactive``
queue: ``/healthz`` answers 503 ``starting`` (a load balancer sends it nothing yet) and a
single-page request waits for the first worker, within its deadline, instead of failing. Once a
worker has been seen, a queue left with none is an outage, answered at once (503
``unavailable``). The memory is per process, kept with the app: "since the API started".

A worker counts while it is registered on the queue (RQ's set of the queue's workers), its
hash has not expired, and, for a worker of this process space, its pid lives
(:mod:`worker.rq_state`): a ``kill -9`` leaves its registration behind for minutes.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any, NamedTuple

from flask import current_app
from redis import Redis

from worker import rq_state
from worker.queues import COLLECTIONS, INTERACTIVE, MAINTENANCE

#: The queues ``/healthz`` counts workers on; ``interactive`` is the one a deployment needs.
QUEUES = (INTERACTIVE, COLLECTIONS, MAINTENANCE)
#: Seconds a look that found workers on a queue is trusted: the look is two Redis round trips,
#: and a worker that died since is found by the waiting request's lookout.
SEEN_FOR = 1.0


class Count(NamedTuple):
    """Workers registered on a queue, and how many of them are not known dead."""

    registered: int
    alive: int


def _memory() -> dict[str, float]:
    """When a live worker was last found on each queue (``time.monotonic()``), by queue name."""
    return current_app.extensions.setdefault("webdata.workers_seen", {})


def saw(queue_name: str) -> None:
    """Remember that a worker listens on ``queue_name`` now."""
    _memory()[queue_name] = time.monotonic()


def seen_lately(queue_name: str) -> bool:
    """Whether a worker was found on the queue less than :data:`SEEN_FOR` seconds ago."""
    return time.monotonic() - _memory().get(queue_name, -SEEN_FOR) < SEEN_FOR


def ever_seen(queue_name: str) -> bool:
    """Whether a live worker has listened on the queue since this process started."""
    return queue_name in _memory()


def count(redis: Redis, names: Iterable[str]) -> dict[str, Count]:
    """Workers of each queue of ``names``, in two round trips."""
    registered = rq_state.queue_workers(redis, names)
    living = rq_state.alive(redis, set().union(*registered.values()))
    return {name: Count(len(keys), len(keys & living)) for name, keys in registered.items()}


def listening(redis: Redis, queue_name: str) -> bool:
    """Whether a live worker listens on the queue now; remembered when one does."""
    if not count(redis, [queue_name])[queue_name].alive:
        return False
    saw(queue_name)
    return True


def census(redis: Redis) -> dict[str, Any]:
    """``{"workers": {queue: live workers}, "cron": n}`` for :data:`QUEUES`, ``n`` being the
    RQ cron schedulers that sent a heartbeat within their time to live; queues found with a
    worker are remembered."""
    workers = {name: found.alive for name, found in count(redis, QUEUES).items()}
    for name, alive in workers.items():
        if alive:
            saw(name)
    return {"workers": workers, "cron": rq_state.live_cron_schedulers(redis)}
