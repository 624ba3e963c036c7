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

Why ``http.client`` on a socket we connect ourselves, rather than an HTTP client library: the
webhook URL is the account's, and must not reach what the crawler may not (a private address,
directly or through DNS that changes between a check and the connect). Here the name is
resolved once, every address is judged by the same :class:`~core.policy.SourcePolicy` as
any fetch, and the connection is made to the address that was judged; ``http.client`` never
follows redirects, and the response body is not read.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import http.client
import logging
import socket
import ssl
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from redis import Redis
from redis.exceptions import RedisError
from standardwebhooks.webhooks import Webhook
from w3lib.url import safe_url_string

from core.config import Config
from core.controls import escaped
from core.policy import PolicyRefusal, SourcePolicy, host_name, literal_address
from storage import webhook_batches, webhooks
from storage.db import shared_for
from storage.models import DeliveryStatus
from worker import metrics, queues

logger = logging.getLogger(__name__)

#: The job that makes one event's first attempt, by name (the API enqueues it too).
DELIVER_JOB = "worker.webhooks.deliver"
#: Attempts :func:`deliver_due` makes at once (each waits at most ``WEBHOOK_TIMEOUT``).
PARALLEL = 8
USER_AGENT = "webdata-webhooks/1"
#: Seconds a drain sends for at most (then it enqueues itself again): one account's events
#: never hold a maintenance worker for long.
DRAIN_SECONDS = 15.0
#: Events a drain claims at a time: two rounds of :data:`PARALLEL`.
DRAIN_BATCH = 2 * PARALLEL
#: Failures in a row after which a drain stops sending to a receiver (see the module).
BREAKER = 3

#: Receivers' names being resolved (:func:`_resolve`), one lookup each, and the most at once.
_LOOKUPS: dict[tuple[str, int], concurrent.futures.Future[list[Any]]] = {}
_LOOKUPS_LOCK = threading.Lock()
MAX_LOOKUPS = 64


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
    without taking a worker from the queue as a :data:`DRAIN_JOB` would (a worker runs one
    job at a time: a drain job beside a slice halved the crawl's workers)."""

    def __init__(self, config: Config):
        self.config = config
        self._wanted: set[str] = set()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def kick(self, collection_id: str) -> None:
        """Drain ``collection_id`` soon (once more if a drain of it is under way)."""
        with self._lock:
            self._wanted.add(collection_id)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name="webhook-drainer")
                self._thread.start()

    def _run(self) -> None:
        while True:
            with self._lock:
                if not self._wanted:
                    self._thread = None
                    return
                collection_id = self._wanted.pop()
            try:
                made = drain(collection_id, self.config)
                if made and webhook_batches.any_due(shared_for(self.config.storage),
                                                    collection_id):
                    self.kick(collection_id)  # its time was up: another round
            except Exception:  # the sweep sends what this did not; never the slice's death
                logger.exception("Draining the webhooks of %s failed", collection_id)


_DRAINERS: dict[int, Drainer] = {}


def drainer(config: Config) -> Drainer:
    """This process's :class:`Drainer` (one per configuration)."""
    with _LOOKUPS_LOCK:
        return _DRAINERS.setdefault(id(config), Drainer(config))


def drain(collection_id: str | None, config: Config | None = None,
          now: datetime | None = None, seconds: float = DRAIN_SECONDS) -> int:
    """Send the due events (of ``collection_id``; every one's when None) in batches of
    :data:`DRAIN_BATCH`, :data:`PARALLEL` at once, for at most ``seconds``; a receiver that
    failed :data:`BREAKER` times in a row gets its other due events counted as failed
    attempts, unsent. How many attempts were made."""
    config = config or Config.from_env()
    db = shared_for(config.storage)
    policy = SourcePolicy.from_config(config.policy)
    timeout = config.collections.webhook_timeout
    deadline = time.monotonic() + seconds
    failures: dict[str, int] = {}
    broken: dict[str, str] = {}
    made = 0
    with ThreadPoolExecutor(PARALLEL, thread_name_prefix="webhook") as pool:
        while time.monotonic() < deadline:
            batch = webhook_batches.claim_due(db, collection_id=collection_id,
                                              limit=DRAIN_BATCH, skip_urls=broken, now=now)
            if not batch:
                break
            outcomes = list(pool.map(lambda event: attempt(event, policy, timeout), batch))
            made += len(batch)
            _record(db, batch, outcomes, failures, broken, now)
    for url, error in broken.items():
        skipped = webhook_batches.fail_unsent(
            db, url, f"not sent: the receiver failed {BREAKER} times in a row ({error})",
            collection_id=collection_id, now=now)
        logger.warning("Webhooks to %s: %d event(s) put off after %d failures in a row",
                       escaped(url), skipped, BREAKER)
    return made


def _record(db: Any, batch: list[webhooks.Claimed],
            outcomes: list[tuple[int | None, str | None]], failures: dict[str, int],
            broken: dict[str, str], now: datetime | None) -> None:
    """Record a batch's attempts: the 2xx in one statement, each other on its own; count the
    failures in a row of each receiver, and mark it broken at :data:`BREAKER`."""
    delivered: dict[str, int] = {}
    for event, (status, error) in zip(batch, outcomes, strict=True):
        if status is not None and 200 <= status < 300:
            delivered[event.id] = status
            failures[event.url] = 0
            continue
        webhooks.record(db, event, status=status, error=error, now=now)
        metrics.attempted(False)
        failures[event.url] = failures.get(event.url, 0) + 1
        if failures[event.url] >= BREAKER:
            broken.setdefault(event.url, escaped(str(status or error)))
    if delivered:
        webhook_batches.record_delivered(
            db, [event for event in batch if event.id in delivered], status=delivered, now=now)
        for _ in delivered:
            metrics.attempted(True)


def attempt(claimed: webhooks.Claimed, policy: SourcePolicy, timeout: float
            ) -> tuple[int | None, str | None]:
    """POST the event; (HTTP status, None) when an answer came, else (None, why not)."""
    headers = signed_headers(claimed.id, claimed.payload, claimed.secrets,
                             datetime.now(UTC))
    try:
        return post(claimed.url, claimed.payload.encode(), headers, policy, timeout), None
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


def post(url: str, body: bytes, headers: dict[str, str], policy: SourcePolicy,
         timeout: float) -> int:
    """POST ``body`` to ``url`` and return the status, connecting only to an address the
    policy allows; raises PolicyRefusal, OSError or HTTPException."""
    policy.check_url(url)
    parts = urlsplit(url)
    https = parts.scheme.lower() == "https"
    raw_host = parts.hostname or ""
    # the name as the policy judged it (IDNA 2008), not as getaddrinfo would encode it
    host = raw_host if literal_address(raw_host) else host_name(raw_host)
    port = parts.port or (443 if https else 80)
    deadline = time.monotonic() + timeout
    current = [_connect(host, port, policy, deadline)]
    cut = threading.Event()
    # one deadline for the whole attempt: a per-operation timeout would let a receiver that
    # drips its headers a byte at a time hold the attempt (and a worker slot) for ever
    timer = threading.Timer(max(0.0, deadline - time.monotonic()), _cut, (current, cut))
    timer.start()
    try:
        if https:
            current[0] = ssl.create_default_context().wrap_socket(current[0],
                                                                   server_hostname=host)
        connection = (http.client.HTTPSConnection if https else http.client.HTTPConnection)(
            host, port, timeout=timeout)
        connection.sock = current[0]  # already connected: http.client does not connect again
        # the path and query as sent: percent-encoded (http.client writes ASCII only)
        wire = urlsplit(safe_url_string(url))
        target = wire.path or "/"
        connection.request("POST", f"{target}?{wire.query}" if wire.query else target,
                           body=body, headers=headers)
        return connection.getresponse().status  # the body is ignored, never read
    except (OSError, http.client.HTTPException) as exc:
        if cut.is_set():
            raise TimeoutError(f"timed out: no answer within {timeout:g} s") from exc
        raise
    finally:
        timer.cancel()
        current[0].close()


def _cut(current: list[socket.socket], cut: threading.Event) -> None:
    """End an attempt past its deadline: shut its socket, which wakes the blocked read."""
    cut.set()
    with contextlib.suppress(OSError):
        current[0].shutdown(socket.SHUT_RDWR)


def _resolve(host: str, port: int, deadline: float) -> list[Any]:
    """``getaddrinfo`` within the attempt's deadline.

    The system resolver takes no timeout, so the lookup runs on a thread of its own (a
    daemon: it ends when the resolver gives up, and never holds the process up); past the
    deadline the attempt fails (TimeoutError) and the lookup goes on without it. Attempts
    for one name share one lookup, so a receiver whose DNS never answers holds one thread
    however many of its events are due, and other receivers' attempts never wait behind it;
    at most :data:`MAX_LOOKUPS` names are looked up at once."""
    key = (host, port)
    with _LOOKUPS_LOCK:
        lookup = _LOOKUPS.get(key)
        if lookup is None:
            if len(_LOOKUPS) >= MAX_LOOKUPS:
                raise TimeoutError(f"timed out resolving {host}: too many names resolving")
            lookup = _LOOKUPS[key] = concurrent.futures.Future()
            threading.Thread(target=_look_up, args=(key, lookup), daemon=True,
                             name=f"webhook-resolver {host}").start()
    try:
        return lookup.result(timeout=max(0.0, deadline - time.monotonic()))
    except concurrent.futures.TimeoutError:
        raise TimeoutError(f"timed out resolving {host}") from None


def _look_up(key: tuple[str, int], lookup: concurrent.futures.Future[list[Any]]) -> None:
    try:
        lookup.set_result(socket.getaddrinfo(*key, type=socket.SOCK_STREAM))
    except BaseException as exc:  # handed to every attempt waiting on it (gaierror…)
        lookup.set_exception(exc)
    finally:
        with _LOOKUPS_LOCK:
            _LOOKUPS.pop(key, None)


def _connect(host: str, port: int, policy: SourcePolicy, deadline: float) -> socket.socket:
    """A socket connected, before ``deadline``, to the first of ``host``'s addresses the
    policy allows."""
    refusals: list[str] = []
    failure: OSError | None = None
    for family, kind, proto, _, address in _resolve(host, port, deadline):
        reason = policy.address_refusal(str(address[0]), port)
        if reason is not None:
            refusals.append(reason)
            continue
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError(f"timed out connecting to {host}")
        sock = socket.socket(family, kind, proto)
        sock.settimeout(remaining)
        try:
            sock.connect(address)
        except OSError as exc:
            sock.close()
            failure = exc
            continue
        return sock
    if failure is not None:
        raise failure
    raise PolicyRefusal(f"Refused by source policy: {refusals[0] if refusals else host}.")
