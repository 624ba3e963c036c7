"""The life of a billable single-page request, shared by every one-URL operation.

pre-check the URL → reserve credits → take one of the account's slots (``api.inflight``) →
run the job on a warm worker → give the slot back → capture (success) or release (any
failure) → answer. Every path writes exactly one line of activity history.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from flask import current_app, g
from sqlalchemy.exc import DBAPIError, IntegrityError

from api import inflight, metrics, page_cache
from api.dispatch import follow_interactive, run_interactive
from api.errors import ApiError
from api.extensions import db, redis, source_policy
from api.limits import rate_limit_headers
from api.schemas.fields import UNSTORABLE
from core.contract import PageStatus
from core.controls import percent_encoded
from core.operations import Operation
from core.policy import PolicyRefusal
from storage import ledger
from storage.db import unavailable
from storage.models import EntryKind, utcnow
from worker import queues

logger = logging.getLogger(__name__)

#: Fields of the page result every single-page response starts with.
COMMON_FIELDS = ("url", "final_url", "status_code", "fetched_at")
#: Pauses (seconds) between the attempts of a settling write (capture or release) that failed
#: on a database error: a locked SQLite file or a PostgreSQL failover often passes in a second.
#: After the last one the reservation is left to the sweeper (``storage.ledger.release_expired``).
SETTLE_BACKOFF = (0.1, 0.5, 1.5)


def history_url(url: str | None) -> str | None:
    """``url`` as a line of history keeps it: None when the database cannot store it (a NUL, a
    lone surrogate: the 422's own cause), its control characters percent-encoded (a request
    refused for one is listed with the URL asked for, never with a raw CR, LF or ESC that would
    reach a terminal or a CSV of the history)."""
    if not url or UNSTORABLE.search(url):
        return None
    return percent_encoded(url)


def request_charge(operation: str, url: str | None, amount: int) -> ledger.Charge:
    """The ledger charge of the request being served (its key is the request id), its URL as
    :func:`history_url` keeps it.

    Making it claims the request's one line of history: every caller settles or records the
    charge, which writes that line (see :func:`history_claimed`).
    """
    charge = ledger.Charge(
        account_id=g.principal.account_id, key=ledger.request_charge_key(g.request_id),
        amount=amount, operation=operation, request_id=g.request_id, url=history_url(url),
        expires_at=request_deadline(),
    )
    g.history_charge = charge
    return charge


def request_lifetime() -> timedelta:
    """How long a request can run for sure: its longest wait (on a job, or on a search
    provider), every database wait around it (the Idempotency-Key claim, the reservation, each
    settle attempt may wait ``DATABASE_TIMEOUT`` on a SQLite lock), then ``RESERVATION_GRACE``.

    One measure for everything that must outlive a request: its reservation's deadline (the
    sweeper releases it after) and its Idempotency-Key's (a retry may take the key over after,
    never while the first request could still capture)."""
    config = current_app.config["WEBDATA"]
    # A search may make two provider calls (YouTube: search, then the videos' counts).
    wait = max(config.api.job_wait_seconds, 2 * config.search.search_timeout)
    settling = (len(SETTLE_BACKOFF) + 3) * config.storage.database_timeout + sum(SETTLE_BACKOFF)
    return timedelta(seconds=wait + settling + config.api.reservation_grace)


def request_deadline() -> datetime:
    """When the request being served is over for sure (:func:`request_lifetime` from now): a
    reservation still open then was abandoned, and the sweeper gives its credits back."""
    return utcnow() + request_lifetime()


def settle(write: Callable[[], int], charge: ledger.Charge) -> int:
    """``write()`` (a capture or a release of ``charge``), retried on database errors.

    When every attempt fails the reservation stays open, and the client is told so (503): the
    sweeper releases it after its deadline, so the credits come back all the same.
    """
    for pause in (*SETTLE_BACKOFF, None):
        try:
            return write()
        except IntegrityError:
            raise  # the charge was closed by someone else: a fact, not a fault to retry
        except DBAPIError as exc:
            if not unavailable(exc):
                raise  # our own fault (a missing table…): a 500 to look into, not a retry
            if pause is None:
                logger.error("Could not settle %s; the sweeper will release it: %s",
                             charge.key, exc)
                raise ApiError(
                    "unavailable", "The database could not record this request; the credits "
                    "held for it are returned automatically. Try again shortly.") from None
            logger.warning("Settling %s failed (%s); retrying in %g s",
                           charge.key, exc.__class__.__name__, pause)
            time.sleep(pause)
    raise AssertionError("unreachable")


def history_written() -> None:
    """Say that the request being served wrote its line of history itself (a collection's
    create or cancel, in the transaction that made the change): none is added after it."""
    g.history_charge = True


def history_claimed() -> bool:
    """Whether the request's line of history is written (or being written) by its charge;
    if not, a refused operation request gets one after the fact
    (``api.factory._finish_request``)."""
    return g.get("history_charge") is not None


def run_billed(
    operation: str, cost: int, work: Callable[[], dict[str, Any]], *, url: str | None = None,
) -> tuple[dict[str, Any], int, dict[str, str]]:
    """Reserve ``cost`` credits, run ``work()``, capture on success, release on any failure.

    ``work`` returns the response fields after ``request_id``/``credits_used`` or raises
    ApiError. Returns (body, 200, headers); the request's one line of history is written here.
    """
    charge = request_charge(operation, url, cost)  # every path below writes its history
    try:
        ledger.reserve(db(), charge)
    except ledger.InsufficientCredits as exc:
        ledger.record_failure(db(), charge, "insufficient_credits")
        raise ApiError("insufficient_credits", str(exc)) from None
    try:
        fields = work()
    except ApiError as exc:
        error = exc.error
        settle(lambda: ledger.release(db(), charge, error), charge)
        raise
    except BaseException:
        settle(lambda: ledger.release(db(), charge, "internal_error"), charge)
        raise
    try:
        cached = fields.get("cached") is True  # another request's fetch, shared
        balance = settle(lambda: ledger.capture(db(), charge, cached=cached), charge)
    except (ledger.ChargeSettled, IntegrityError):
        if ledger.closed_by(db(), charge) != EntryKind.CAPTURE:
            # Released by the sweeper meanwhile: this request outlived its deadline (503, a
            # status every operation documents: a search answers no 504).
            raise ApiError("unavailable", "This request outlived its deadline and its "
                           "credits were returned: nothing was charged. Try again.") from None
        balance = ledger.balance_of(db(), charge.account_id)  # an attempt committed unseen
    return _billed(cost, balance, fields)


def run_spent(operation: str, cost: int, fields: dict[str, Any], *, url: str | None = None
              ) -> tuple[dict[str, Any], int, dict[str, str]]:
    """Charge ``cost`` for an answer that is ready (a cache hit: nothing can fail now), its
    line of history marked cached, in one transaction; (body, 200, headers) as
    :func:`run_billed`."""
    charge = request_charge(operation, url, cost)
    try:
        balance = settle(lambda: ledger.spend(db(), charge, cached=True), charge)
    except ledger.InsufficientCredits as exc:
        ledger.record_failure(db(), charge, "insufficient_credits")
        raise ApiError("insufficient_credits", str(exc)) from None
    except (ledger.ChargeSettled, IntegrityError):  # an attempt committed unseen: it is spent
        balance = ledger.balance_of(db(), charge.account_id)
    return _billed(cost, balance, fields)


def _billed(cost: int, balance: int, fields: dict[str, Any]
            ) -> tuple[dict[str, Any], int, dict[str, str]]:
    metrics.booked(g.history_charge.operation, cost, cached=fields.get("cached") is True)
    body = {"request_id": g.request_id, "credits_used": cost, **fields}
    headers = {"X-Credits-Used": str(cost), "X-Credits-Remaining": str(balance)}
    return body, 200, headers


def refuse(operation: str, error: ApiError, *, url: str | None = None, cost: int = 0) -> ApiError:
    """Record a request refused before any work (0 credits) and return the error to raise."""
    ledger.record_failure(db(), request_charge(operation, url, cost), error.error)
    return error


def run_page_operation(page: Operation, url: str, max_age: int = 0, **options: Any,
                       ) -> tuple[dict[str, Any], int, dict[str, str]]:
    """Run page operation ``page`` (core.operations) on ``url`` on a warm worker, billed its
    price; (body, status, headers) or ApiError. An answer of the page cache at most
    ``max_age`` seconds old is answered instead, at the same price (:mod:`api.page_cache`).

    The job is :data:`worker.queues.OPERATION_JOB`, by name: the API process never imports the
    crawler, only the worker does. The body holds the page result's common fields (unless the
    operation's contract leaves them out) followed by the job's ``data``.
    """
    operation, cost = page.name, page.cost
    try:
        source_policy().check_url(url)
    except PolicyRefusal as exc:
        raise refuse(operation, ApiError(exc.code, exc.message,
                                         details={"url": url, "target_status": None}),
                     url=url, cost=cost) from None
    lookup = page_cache.look_up(operation, url, options, max_age)
    if lookup is not None and lookup.fresh:
        answered = run_spent(operation, cost, _answer_fields(page, lookup.answer_fields(url)),
                             url=url)
        page_cache.used(lookup)
        return answered
    if lookup is not None:
        options["cache"] = lookup.job_argument()

    def work() -> dict[str, Any]:
        # Credits are reserved already (a burst over the balance gets its 402s, not 429s); a
        # request over the account's cap is refused at once (429), its reservation released.
        principal = g.principal
        wait = current_app.config["WEBDATA"].api.job_wait_seconds
        deadline = time.monotonic() + wait  # one wait for the whole request
        shared: dict[str, Any] | None = None
        with inflight.slot(redis(), principal.account_id, g.request_id,
                           principal.max_concurrent_requests, lease=request_lifetime(),
                           unreachable=bool(g.get("redis_unreachable"))) as slot, \
                contextlib.ExitStack() as stack:
            claim = None
            if lookup is not None:  # one fetch for identical requests at once
                claim = stack.enter_context(page_cache.filling(redis(), lookup, g.request_id,
                                                               wait))
                if claim.leader is not None:
                    shared = follow_interactive(redis(), claim.leader, wait)
                    if not page_cache.shareable(shared):
                        shared = None  # failed, or not for a shared cache: fetch it here
            left = wait
            if claim is not None and claim.leader is not None and shared is None:
                left = deadline - time.monotonic()  # part of it went on another's fetch
                if left < 1:
                    raise ApiError("timeout",
                                   f"No result within {wait:g} s; nothing was charged.")
            # the answer's RateLimit-* headers are read from Redis while the job runs
            result = shared or run_interactive(redis(), queues.OPERATION_JOB, operation, url,
                                               job_id=g.request_id, wait=left,
                                               meanwhile=rate_limit_headers, slot=slot,
                                               **options)
            if claim is not None and shared is None:
                claim.handed_over = page_cache.shareable(result)
        if result["status"] != PageStatus.SUCCEEDED:
            raise ApiError.from_result(result["error"] or {})
        if shared is not None:
            return _answer_fields(page, {**result, **page_cache.shared_fields(result),
                                         "url": url})
        return _answer_fields(page, {**result, **page_cache.FETCHED})

    return run_billed(operation, cost, work, url=url)


def _answer_fields(page: Operation, result: dict[str, Any]) -> dict[str, Any]:
    """A page result (with its ``cached``/``cached_at``) as ``page``'s answer fields: the
    common ones (unless its contract leaves them out), then its ``data``."""
    names = (*COMMON_FIELDS, "cached", "cached_at") if page.common_fields else (
        "cached", "cached_at")
    return {**{name: result[name] for name in names}, **(result["data"] or {})}
