"""Draining the outbox: many due events at a time (a crawl's page events, the cron sweep),
claimed in batches, sent in parallel only as far as the receivers' speed needs, recorded in
one statement per batch; and the :class:`Drainer` thread that does it beside a crawl.

Why the care about threads: the page events are sent by the crawling worker's own process, so
every thread that wakes to send one takes Python's lock from the crawl. A receiver that
answers in a millisecond gets its batch from the drainer's own thread, in order, on one kept
connection; only slower receivers get up to :data:`PARALLEL` threads (:class:`Sender`).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from core.config import Config
from core.controls import escaped
from core.policy import SourcePolicy
from storage import webhook_batches, webhooks
from storage.db import shared_for
from worker import metrics
from worker.webhook_http import Connections, attempt

logger = logging.getLogger(__name__)

#: Attempts made at once at most (each waits at most ``WEBHOOK_TIMEOUT``).
PARALLEL = 8
#: Seconds a drain sends for at most: one account's events never hold a worker for long.
DRAIN_SECONDS = 15.0
#: Events a drain claims at a time at first, and after a failure: two rounds of
#: :data:`PARALLEL`.
DRAIN_BATCH = 2 * PARALLEL
#: Events a drain claims at a time at most: after batches sent in full within
#: :data:`FAST_BATCH` seconds, the claim doubles up to this.
MAX_BATCH = 16 * PARALLEL
FAST_BATCH = 2.0
#: Failures in a row after which a drain stops sending to a receiver (see worker.webhooks).
BREAKER = 3
#: Seconds a batch should take at most by the receivers' known speed: threads are added
#: (up to :data:`PARALLEL`) as far as that needs.
BATCH_SECONDS = 0.25
#: Seconds an attempt to a receiver not timed yet is taken to last (so its first batch is
#: sent in parallel).
UNKNOWN_LATENCY = 1.0
#: Seconds a :class:`Drainer` waits for its next kick before its thread ends (and closes its
#: connections): a crawl kicks it after each stored batch, seconds apart at most.
LINGER = 5.0
#: Seconds between the starts of two passes of a :class:`Drainer`: the events of the batches
#: stored meanwhile go out in one claim (fewer statements per event), at most this late.
PASS_SECONDS = 1.0


#: Receivers probed at most per sweep (:func:`sweep`).
PROBES = PARALLEL
#: A receiver is probed when its next retry is further away than this.
PROBE_AFTER = timedelta(seconds=60)


class Sender:
    """What drains share while they live: threads, kept connections and each receiver's
    speed (a moving average of its attempts' seconds)."""

    def __init__(self) -> None:
        self.pool = ThreadPoolExecutor(PARALLEL, thread_name_prefix="webhook")
        self.connections = Connections()
        self.latency: dict[str, float] = {}
        self._lock = threading.Lock()

    def timed(self, url: str, seconds: float) -> None:
        """Count an attempt to ``url`` that took ``seconds``."""
        with self._lock:
            if len(self.latency) > 1000 and url not in self.latency:
                self.latency.clear()  # bounded: a sweep meets any number of receivers
            known = self.latency.get(url)
            self.latency[url] = seconds if known is None else 0.8 * known + 0.2 * seconds

    def threads_for(self, batch: list[webhooks.Claimed]) -> int:
        """How many threads send ``batch``: enough for :data:`BATCH_SECONDS` at the
        receivers' known speed, 1 to :data:`PARALLEL`."""
        expected = sum(self.latency.get(event.url, UNKNOWN_LATENCY) for event in batch)
        return max(1, min(PARALLEL, len(batch), math.ceil(expected / BATCH_SECONDS)))

    def close(self) -> None:
        self.pool.shutdown()
        self.connections.close()


@dataclass
class Round:
    """What one drain did."""

    made: int = 0  #: attempts made
    more: bool = False  #: its time ran out with events still due
    size: int = DRAIN_BATCH  #: the claim it would make next
    #: Receivers it stopped sending to (url → the last failure).
    broken: dict[str, str] = field(default_factory=dict)


def drain(collection_id: str | None, config: Config | None = None,
          now: datetime | None = None, seconds: float = DRAIN_SECONDS) -> int:
    """Send the due events (of ``collection_id``; every one's when None) for at most
    ``seconds`` (:func:`drain_round` with a :class:`Sender` of its own); how many attempts
    were made."""
    sender = Sender()
    try:
        return drain_round(collection_id, config or Config.from_env(), sender, now,
                           seconds).made
    finally:
        sender.close()


def drain_round(collection_id: str | None, config: Config, sender: Sender,
                now: datetime | None = None, seconds: float = DRAIN_SECONDS,
                size: int = DRAIN_BATCH) -> Round:
    """Send the due events (of ``collection_id``; every one's when None) for at most
    ``seconds``, in claims of ``size`` that double up to :data:`MAX_BATCH` while every
    attempt succeeds quickly (fewer statements per event for a receiver that keeps up; a
    failing one is claimed :data:`DRAIN_BATCH` at a time). A receiver that failed
    :data:`BREAKER` times in a row is sent nothing more: its other due events are counted
    as failed attempts, unsent."""
    db = shared_for(config.storage)
    policy = SourcePolicy.from_config(config.policy)
    timeout = config.collections.webhook_timeout
    deadline = time.monotonic() + seconds
    breaker = _Breaker(sender)
    done = Round(size=size)
    while True:
        if time.monotonic() >= deadline:
            done.more = True
            break
        began = time.monotonic()
        batch = webhook_batches.claim_due(db, collection_id=collection_id, limit=done.size,
                                          skip_urls=breaker.broken, now=now)
        # after the first round, an attempt that could outlast its claim is not started:
        # another sender may take the event once the claim is over, and one attempt is
        # never made twice
        send = partial(breaker.attempt, send_by=began + webhooks.CLAIM.total_seconds()
                       - timeout, policy=policy, timeout=timeout)
        outcomes = _send(sender, batch, send)
        sent = [(event, outcome) for event, outcome in zip(batch, outcomes, strict=True)
                if outcome is not None]
        done.made += len(sent)
        _record(db, sent, now)
        webhook_batches.release(db, [event for event, outcome in zip(batch, outcomes,
                                                                     strict=True)
                                     if outcome is None])
        fast = len(sent) == len(batch) and time.monotonic() - began < FAST_BATCH
        full = len(batch) == done.size
        done.size = (min(2 * done.size, MAX_BATCH) if fast and not breaker.failed
                     else DRAIN_BATCH)
        breaker.failed = False
        if not full:  # nothing more was due when it was claimed
            break
    for url, error in breaker.broken.items():
        skipped = webhook_batches.fail_unsent(
            db, url, f"not sent: the receiver failed {BREAKER} times in a row ({error})",
            collection_id=collection_id, now=now)
        logger.warning("Webhooks to %s: %d event(s) put off after %d failures in a row",
                       escaped(url), skipped, BREAKER)
    done.broken = breaker.broken
    return done


def sweep(config: Config, now: datetime | None = None, seconds: float = DRAIN_SECONDS
          ) -> int:
    """The cron sweep: every due attempt (a drain of all events), then a probe of the
    receivers whose events all wait for a retry more than :data:`PROBE_AFTER` away (up to
    :data:`PROBES`, one event each). A probe that fails is not counted as an attempt (its
    claim is given back): it only looks whether the receiver is back. One that succeeds
    delivers its event and makes its receiver's other events due at once, sent in the same
    sweep: after an outage, a receiver gets its backlog within a sweep of its return, not at
    the next step of the backoff (30 minutes after its third failure, 2 hours after its
    fourth). How many attempts were made (failed probes not counted)."""
    deadline = time.monotonic() + seconds
    sender = Sender()
    try:
        done = drain_round(None, config, sender, now, seconds)
        db = shared_for(config.storage)
        probes = webhook_batches.claim_probes(db, limit=PROBES, after=PROBE_AFTER,
                                              skip_urls=done.broken, now=now)
        if not probes:
            return done.made
        timeout = config.collections.webhook_timeout
        policy = SourcePolicy.from_config(config.policy)
        outcomes = list(sender.pool.map(
            lambda event: attempt(event, policy, timeout, sender.connections), probes))
        answered = [(event, outcome) for event, outcome in zip(probes, outcomes, strict=True)
                    if outcome[0] is not None and 200 <= outcome[0] < 300]
        webhook_batches.release(db, [event for event, outcome in zip(probes, outcomes,
                                                                     strict=True)
                                     if (event, outcome) not in answered])
        if not answered:
            return done.made
        _record(db, answered, now)
        back = {event.url for event, _ in answered}
        waiting = webhook_batches.pull_forward(db, back, now)
        logger.info("Webhooks: %d receiver(s) answering again, %d event(s) due at once",
                    len(back), waiting)
        rest = drain_round(None, config, sender, now, max(0.0, deadline - time.monotonic()))
        return done.made + len(answered) + rest.made
    finally:
        sender.close()


Outcome = tuple[int | None, str | None] | None


def _send(sender: Sender, batch: list[webhooks.Claimed], send: Any) -> list[Outcome]:
    """``send(index, event)`` for each event of ``batch``, in order on this thread, or
    spread over :meth:`Sender.threads_for` threads (each sending its share in order)."""
    threads = sender.threads_for(batch) if batch else 1
    if threads == 1:
        return [send(index, event) for index, event in enumerate(batch)]
    shares = [list(range(first, len(batch), threads)) for first in range(threads)]
    outcomes: list[Outcome] = [None] * len(batch)

    def run(share: list[int]) -> None:
        for index in share:
            outcomes[index] = send(index, batch[index])

    list(sender.pool.map(run, shares))
    return outcomes


class _Breaker:
    """A drain's failures in a row by receiver, as its attempts end (from its threads): at
    :data:`BREAKER`, the receiver is broken and sent nothing more in this drain."""

    def __init__(self, sender: Sender) -> None:
        self.sender = sender
        self.broken: dict[str, str] = {}  #: url → the last failure
        self.failed = False  #: an attempt failed since the flag was cleared
        self._streaks: dict[str, int] = {}
        self._lock = threading.Lock()

    def attempt(self, index: int, event: webhooks.Claimed, *, send_by: float,
                policy: SourcePolicy, timeout: float) -> Outcome:
        """:func:`~worker.webhook_http.attempt` of a batch's ``index``-th event, unless its
        receiver is broken, or ``send_by`` (monotonic) has passed and it is not in the
        first round: then None, nothing sent."""
        late = index >= PARALLEL and time.monotonic() > send_by
        if late or event.url in self.broken:
            return None
        began = time.monotonic()
        status, error = attempt(event, policy, timeout, self.sender.connections)
        self.sender.timed(event.url, time.monotonic() - began)
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


class Drainer:
    """A sender thread of the slice's own process (:func:`drain_round`s of the collections
    it was :meth:`kick`ed for): page events go out while the slice crawls, without taking a
    worker from the queue as a drain job would (a worker runs one job at a time: a drain job
    beside a slice halved the crawl's workers). It makes a pass at most every
    :data:`PASS_SECONDS`, and between kicks waits up to :data:`LINGER` s, keeping its
    :class:`Sender` (threads, connections, receivers' speed) for the next batch's events."""

    def __init__(self, config: Config):
        self.config = config
        self._wanted: set[str] = set()
        self._sizes: dict[str, int] = {}
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

    def _take(self) -> set[str]:
        """The collections to drain now, waiting up to :data:`LINGER` s for one; none:
        the thread ends."""
        with self._lock:
            if not self._wanted:
                self._lock.wait(LINGER)
            wanted, self._wanted = self._wanted, set()
            if not wanted:
                self._thread = None
            return wanted

    def _run(self) -> None:
        sender = Sender()
        try:
            while wanted := self._take():
                began = time.monotonic()
                for collection_id in wanted:
                    self._drain(collection_id, sender)
                time.sleep(max(0.0, began + PASS_SECONDS - time.monotonic()))
        finally:
            sender.close()

    def _drain(self, collection_id: str, sender: Sender) -> None:
        try:
            done = drain_round(collection_id, self.config, sender,
                               size=self._sizes.pop(collection_id, DRAIN_BATCH))
        except Exception:  # the sweep sends what this did not; never the slice's death
            logger.exception("Draining the webhooks of %s failed", collection_id)
            return
        if len(self._sizes) < 1000:
            self._sizes[collection_id] = done.size
        if done.more:
            self.kick(collection_id)  # its time was up: another round


_DRAINERS: dict[int, Drainer] = {}
_DRAINERS_LOCK = threading.Lock()


def drainer(config: Config) -> Drainer:
    """This process's :class:`Drainer` (one per configuration)."""
    with _DRAINERS_LOCK:
        return _DRAINERS.setdefault(id(config), Drainer(config))
