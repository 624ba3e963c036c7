"""Sending webhook events (the outbox of :mod:`storage.webhooks`), signed the Standard Webhooks
way, under the source policy.

Three ways in:

- :func:`deliver`, a ``maintenance`` job enqueued by whoever made a collection final
  (:func:`announce`): the first attempt, seconds after the event;
- :func:`drain`, by a :class:`Drainer` thread of the slice's process, kicked after each batch
  stored with page events: the collection's due events, in batches, :data:`PARALLEL` at
  once, for at most :data:`DRAIN_SECONDS` a round, again while more are due;
- :func:`deliver_due`, a ``maintenance`` job on RQ's cron schedule: every attempt that is
  due (retries on :data:`storage.webhooks.BACKOFF`, and any first attempt whose job was lost
  with Redis), as a drain of everything.

All only send what they claimed, so an attempt is never made twice. A drain stops sending to a
receiver after :data:`BREAKER` failures in a row and counts an attempt for its other due
events without sending them (:func:`storage.webhook_batches.fail_unsent`): they wait for their
backoff like the failed ones, and a dead receiver holds a worker seconds, not hours.

The HTTP of an attempt (policy-judged addresses, one deadline, kept-alive connections) is
:mod:`worker.webhook_http`'s.
"""

from __future__ import annotations

import http.client
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from functools import partial
from typing import Any

from redis import Redis
from redis.exceptions import RedisError
from standardwebhooks.webhooks import Webhook

from core.config import Config
from core.controls import escaped
from core.policy import PolicyRefusal, SourcePolicy
from storage import webhook_batches, webhooks
from storage.db import shared_for
from storage.models import DeliveryStatus
from worker import metrics, queues
from worker.webhook_http import Connections, post

logger = logging.getLogger(__name__)

#: The job that makes one event's first attempt, by name (the API enqueues it too).
DELIVER_JOB = "worker.webhooks.deliver"
#: Attempts :func:`deliver_due` makes at once (each waits at most ``WEBHOOK_TIMEOUT``).
PARALLEL = 8
USER_AGENT = "webdata-webhooks/1"
#: Seconds a drain sends for at most (then it enqueues itself again): one account's events
#: never hold a maintenance worker for long.
DRAIN_SECONDS = 15.0
#: Events a drain claims at a time at first, and after a failure: two rounds of
#: :data:`PARALLEL`.
DRAIN_BATCH = 2 * PARALLEL
#: Events a drain claims at a time at most: after batches sent in full within
#: :data:`FAST_BATCH` seconds, the claim doubles up to this.
MAX_BATCH = 16 * PARALLEL
FAST_BATCH = 2.0
#: Failures in a row after which a drain stops sending to a receiver (see the module).
BREAKER = 3
#: Seconds a :class:`Drainer` waits for its next kick before its thread ends (and closes its
#: connections): a crawl kicks it after each stored batch, seconds apart at most.
LINGER = 5.0


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


def deliver_due(config: Config | None = None) -> int:
    """Every due attempt (:func:`drain` of all events, within its time); how many were
    made."""
    return drain(None, config)


class Drainer:
    """A sender thread of the slice's own process (:func:`drain`s of the collections it was
    :meth:`kick`ed for, one after the other): page events go out while the slice crawls,
    without taking a worker from the queue as a drain job would (a worker runs one job at a
    time: a drain job beside a slice halved the crawl's workers). Between kicks its thread
    waits up to :data:`LINGER` s, keeping its sending threads and its receivers'
    connections (:class:`~worker.webhook_http.Connections`) for the next batch's events."""

    def __init__(self, config: Config):
        self.config = config
        self._wanted: set[str] = set()
        self._lock = threading.Condition()
        self._thread: threading.Thread | None = None

    def kick(self, collection_id: str) -> None:
        """Drain ``collection_id`` soon (once more if a drain of it is under way)."""
        with self._lock:
            self._wanted.add(collection_id)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name="webhook-drainer")
                self._thread.start()
            else:
                self._lock.notify()

    def _next(self) -> str | None:
        """The next collection to drain, waiting up to :data:`LINGER` s; None: the thread
        ends."""
        with self._lock:
            if not self._wanted:
                self._lock.wait(LINGER)
            if not self._wanted:
                self._thread = None
                return None
            return self._wanted.pop()

    def _run(self) -> None:
        connections = Connections()
        try:
            with ThreadPoolExecutor(PARALLEL, thread_name_prefix="webhook") as pool:
                while (collection_id := self._next()) is not None:
                    self._drain(collection_id, pool, connections)
        finally:
            connections.close()

    def _drain(self, collection_id: str, pool: ThreadPoolExecutor,
               connections: Connections) -> None:
        try:
            made = drain(collection_id, self.config, pool=pool, connections=connections)
            if made and webhook_batches.any_due(shared_for(self.config.storage),
                                                collection_id):
                self.kick(collection_id)  # its time was up: another round
        except Exception:  # the sweep sends what this did not; never the slice's death
            logger.exception("Draining the webhooks of %s failed", collection_id)


_DRAINERS: dict[int, Drainer] = {}
_DRAINERS_LOCK = threading.Lock()


def drainer(config: Config) -> Drainer:
    """This process's :class:`Drainer` (one per configuration)."""
    with _DRAINERS_LOCK:
        return _DRAINERS.setdefault(id(config), Drainer(config))


def drain(collection_id: str | None, config: Config | None = None,
          now: datetime | None = None, seconds: float = DRAIN_SECONDS, *,
          pool: ThreadPoolExecutor | None = None,
          connections: Connections | None = None) -> int:
    """Send the due events (of ``collection_id``; every one's when None), :data:`PARALLEL`
    at once (on ``pool``'s threads and ``connections``' kept connections when given, else
    its own), for at most ``seconds``, in claims of :data:`DRAIN_BATCH` that double up to
    :data:`MAX_BATCH` while every attempt succeeds quickly (fewer statements per event for a
    receiver that keeps up; a failing one is claimed 16 at a time). A receiver that failed
    :data:`BREAKER` times in a row is sent nothing more: its other due events are counted
    as failed attempts, unsent. How many attempts were made."""
    if pool is None or connections is None:
        own = Connections()
        try:
            with ThreadPoolExecutor(PARALLEL, thread_name_prefix="webhook") as mine:
                return drain(collection_id, config, now, seconds, pool=mine, connections=own)
        finally:
            own.close()
    config = config or Config.from_env()
    db = shared_for(config.storage)
    policy = SourcePolicy.from_config(config.policy)
    timeout = config.collections.webhook_timeout
    deadline = time.monotonic() + seconds
    breaker = _Breaker()
    made, size = 0, DRAIN_BATCH
    while time.monotonic() < deadline:
        began = time.monotonic()
        batch = webhook_batches.claim_due(db, collection_id=collection_id, limit=size,
                                          skip_urls=breaker.broken, now=now)
        if not batch:
            break
        # after the first round, an attempt that could outlast its claim is not started:
        # another sender may take the event once the claim is over, and one attempt is
        # never made twice
        send_by = began + webhooks.CLAIM.total_seconds() - timeout
        outcomes = list(pool.map(partial(breaker.attempt, send_by=send_by, policy=policy,
                                         timeout=timeout, connections=connections),
                                 range(len(batch)), batch))
        sent = [(event, outcome) for event, outcome in zip(batch, outcomes, strict=True)
                if outcome is not None]
        made += len(sent)
        _record(db, sent, now)
        webhook_batches.release(db, [event for event, outcome in zip(batch, outcomes,
                                                                     strict=True)
                                     if outcome is None])
        fast = len(sent) == len(batch) and time.monotonic() - began < FAST_BATCH
        size = min(2 * size, MAX_BATCH) if fast and not breaker.failed else DRAIN_BATCH
        breaker.failed = False
    for url, error in breaker.broken.items():
        skipped = webhook_batches.fail_unsent(
            db, url, f"not sent: the receiver failed {BREAKER} times in a row ({error})",
            collection_id=collection_id, now=now)
        logger.warning("Webhooks to %s: %d event(s) put off after %d failures in a row",
                       escaped(url), skipped, BREAKER)
    return made


class _Breaker:
    """A drain's failures in a row by receiver, as its attempts end (from its threads): at
    :data:`BREAKER`, the receiver is broken and sent nothing more in this drain."""

    def __init__(self) -> None:
        self.broken: dict[str, str] = {}  #: url → the last failure
        self.failed = False  #: an attempt failed since the flag was cleared
        self._streaks: dict[str, int] = {}
        self._lock = threading.Lock()

    def attempt(self, index: int, event: webhooks.Claimed, *, send_by: float,
                policy: SourcePolicy, timeout: float, connections: Connections
                ) -> tuple[int | None, str | None] | None:
        """:func:`attempt` of a batch's ``index``-th event, unless its receiver is broken,
        or ``send_by`` (monotonic) has passed and it is not in the first round: then None,
        nothing sent."""
        late = index >= PARALLEL and time.monotonic() > send_by
        if late or event.url in self.broken:
            return None
        status, error = attempt(event, policy, timeout, connections)
        with self._lock:
            if status is not None and 200 <= status < 300:
                self._streaks[event.url] = 0
            else:
                self.failed = True
                self._streaks[event.url] = self._streaks.get(event.url, 0) + 1
                if self._streaks[event.url] >= BREAKER:
                    self.broken.setdefault(event.url, escaped(str(status or error)))
        return status, error


def _record(db: Any, sent: list[tuple[webhooks.Claimed, tuple[int | None, str | None]]],
            now: datetime | None) -> None:
    """Record a batch's attempts: the 2xx in one statement, each other on its own."""
    delivered: dict[str, int] = {}
    for event, (status, error) in sent:
        if status is not None and 200 <= status < 300:
            delivered[event.id] = status
            continue
        webhooks.record(db, event, status=status, error=error, now=now)
        metrics.attempted(False)
    if delivered:
        webhook_batches.record_delivered(
            db, [event for event, _ in sent if event.id in delivered], status=delivered,
            now=now)
        for _ in delivered:
            metrics.attempted(True)


def attempt(claimed: webhooks.Claimed, policy: SourcePolicy, timeout: float,
            connections: Connections | None = None) -> tuple[int | None, str | None]:
    """POST the event (on a kept connection of ``connections`` when one is idle); (HTTP
    status, None) when an answer came, else (None, why not)."""
    headers = signed_headers(claimed.id, claimed.payload, claimed.secrets,
                             datetime.now(UTC))
    try:
        return post(claimed.url, claimed.payload.encode(), headers, policy, timeout,
                    connections), None
    except PolicyRefusal as exc:
        return None, exc.message
    except Exception as exc:  # a bug too costs this event an attempt, never the sweep of all
        if not isinstance(exc, OSError | http.client.HTTPException):
            logger.exception("Webhook %s: the attempt failed unexpectedly", claimed.id)
        return None, f"{type(exc).__name__}: {exc}"[:300]


def signed_headers(event_id: str, payload: str, secrets: tuple[str, ...], now: datetime
                   ) -> dict[str, str]:
    """The headers of one attempt: Standard Webhooks' three (one ``v1,`` signature per
    secret, space-separated) and the content type."""
    return {
        "Content-Type": "application/json", "User-Agent": USER_AGENT,
        "webhook-id": event_id, "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": " ".join(Webhook(secret).sign(event_id, now, payload)
                                      for secret in secrets),
    }
