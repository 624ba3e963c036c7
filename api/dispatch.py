"""Run a job on a warm worker and wait for its result, with a deadline.

The API process never crawls: it enqueues on the ``interactive`` queue and blocks on RQ's
result stream (``XREAD``), which wakes the instant the worker stores the result.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Callable
from typing import Any

from flask import current_app
from redis.exceptions import RedisError
from rq import Worker
from rq.results import Result

from api.errors import ApiError
from worker import queues

logger = logging.getLogger(__name__)


def run_interactive(
    redis: Any, func: str | Callable[..., dict[str, Any]], *args: Any, job_id: str, wait: float,
    **kwargs: Any,
) -> dict[str, Any]:
    """The job's return value; raises ApiError 503 (no worker, no Redis) or 504 (too slow).

    ``func`` may be a dotted name (``"worker.jobs.scrape"``), which RQ imports in the worker.
    """
    try:
        queue = queues.queue(queues.INTERACTIVE, redis)
        if not Worker.count(queue=queue):
            raise ApiError("unavailable", "No crawler worker is running; try again shortly.")
        job = queue.enqueue(
            func, *args, **kwargs,
            job_id=job_id,
            job_timeout=current_app.config["WEBDATA"].interactive_job_timeout,
            result_ttl=queues.INTERACTIVE_RESULT_TTL,
            failure_ttl=queues.INTERACTIVE_RESULT_TTL,
            ttl=queues.INTERACTIVE_QUEUE_TTL,
        )
        result = job.latest_result(timeout=max(1, math.ceil(wait)))
    except RedisError as exc:
        logger.error("Redis unavailable: %s", exc)
        raise ApiError("unavailable", "The job queue is unreachable; try again shortly.") from None
    if result is None:
        with contextlib.suppress(RedisError):
            job.cancel()
        raise ApiError("timeout", f"No result within {wait:g} s; nothing was charged.")
    if result.type == Result.Type.SUCCESSFUL:
        return result.return_value
    reason = result.exc_string or ""
    if "JobTimeoutException" in reason:
        raise ApiError("timeout", "The page took too long to process; nothing was charged.")
    logger.error("Job %s failed: %s", job_id, reason[-2000:])
    raise ApiError("internal_error", "The worker failed on this page; nothing was charged.")
