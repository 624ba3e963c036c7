"""Sending webhook events (the outbox of :mod:`storage.webhooks`), signed the Standard Webhooks
way, under the source policy.

Three ways in:

- :func:`deliver`, a ``maintenance`` job enqueued by whoever made a collection final
  (:func:`announce`): the first attempt, seconds after the event;
- :func:`~worker.webhook_drain.drain_round`, by a :class:`~worker.webhook_drain.Drainer`
  thread of the slice's process, kicked after each batch stored with page events: the
  collection's due events, in batches, for at most :data:`DRAIN_SECONDS` a round, again while
  more are due (:mod:`worker.webhook_drain`);
- :func:`deliver_due`, a ``maintenance`` job on RQ's cron schedule: every attempt that is
  due (retries on :data:`storage.webhooks.BACKOFF`, and any first attempt whose job was lost
  with Redis), as a drain of everything, then a probe of the receivers whose events wait for
  a late retry (:func:`~worker.webhook_drain.sweep`).

All only send what they claimed, so an attempt is never made twice (one exception: an
attempt on a kept connection that the receiver closed, answering nothing, is made again at
once on a new connection; a receiver that had read the request before hanging up sees the
event twice, deduplicated on its ``webhook-id`` like any retry). A drain stops sending to a
receiver after :data:`BREAKER` failures in a row and counts an attempt for its other due
events without sending them (:func:`storage.webhook_batches.fail_unsent`): they wait for their
backoff like the failed ones, and a dead receiver holds a worker seconds, not hours.

The HTTP of an attempt (signed headers, policy-judged addresses, one deadline, kept-alive
connections) is :mod:`worker.webhook_http`'s.
"""

from __future__ import annotations

import logging
from datetime import datetime

from redis import Redis
from redis.exceptions import RedisError

from core.config import Config
from core.controls import escaped
from core.policy import SourcePolicy
from storage import webhooks
from storage.db import shared_for
from storage.models import DeliveryStatus
from worker import metrics, queues
from worker.webhook_drain import (  # noqa: F401 (re-exported: the drain's public names)
    BREAKER,
    DRAIN_BATCH,
    DRAIN_SECONDS,
    MAX_BATCH,
    PARALLEL,
    Drainer,
    drain,
    drainer,
    sweep,
)
from worker.webhook_http import attempt, signed_headers  # noqa: F401 (re-exported)

logger = logging.getLogger(__name__)

#: The job that makes one event's first attempt, by name (the API enqueues it too).
DELIVER_JOB = "worker.webhooks.deliver"


def announce(connection: Redis, collection_id: str) -> None:
    """Ask for the first attempt of the collection's event at once (if it has one: the job
    finds nothing to claim otherwise). Best effort: the cron sweep sends it anyway."""
    try:
        queues.queue(queues.MAINTENANCE, connection).enqueue(
            DELIVER_JOB, webhooks.event_id(collection_id), job_timeout=120, result_ttl=600,
            failure_ttl=86400, description=f"webhook of {collection_id}")
    except RedisError as exc:
        logger.warning("Could not enqueue the webhook of %s (the sweep will send it): %s",
                       collection_id, exc)


def deliver(event_id: str, config: Config | None = None, now: datetime | None = None
            ) -> str | None:
    """Make the event's next attempt if it is due (at ``now``) and free; its status after,
    or None when there was nothing to do."""
    config = config or Config.from_env()
    db = shared_for(config.storage)
    claimed = webhooks.claim(db, event_id, now)
    if claimed is None:
        return None
    status, error = attempt(claimed, SourcePolicy.from_config(config.policy),
                            config.collections.webhook_timeout)
    outcome = webhooks.record(db, claimed, status=status, error=error, now=now)
    metrics.attempted(outcome == DeliveryStatus.DELIVERED)
    log = logger.info if outcome != "failed" else logger.warning
    log("Webhook %s, attempt %d: %s (%s)", event_id, claimed.attempts + 1,
        escaped(status or error), outcome)
    return outcome


def deliver_due(config: Config | None = None, now: datetime | None = None) -> int:
    """The cron sweep (:func:`~worker.webhook_drain.sweep`): every due attempt, and a probe
    of the receivers waiting for a late retry; how many attempts were made."""
    return sweep(config or Config.from_env(), now)
