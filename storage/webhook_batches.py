"""The outbox taken in batches (:mod:`storage.webhooks` holds the one-event path): what a
drain of many events (a collection's pages, the cron sweep) claims, records and, for a
receiver that keeps failing, counts as failed without sending."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Select, case, func, select, update
from sqlalchemy.orm import Session

from storage import webhook_events
from storage.db import Database
from storage.models import Account, DeliveryStatus, WebhookEvent, as_utc, utcnow
from storage.webhooks import ATTEMPTS, BACKOFF, CLAIM, Claimed, due_and_free, signing_secrets

_EVENTS = WebhookEvent.__table__


def claim_due(db: Database, *, collection_id: str | None = None, limit: int = 16,
              skip_urls: Collection[str] = (), now: datetime | None = None) -> list[Claimed]:
    """Hold up to ``limit`` due and free events (of ``collection_id`` when given, none to
    ``skip_urls``), oldest first, for one attempt each: one conditional ``UPDATE … RETURNING``
    (so two drains never hold one event), one read of their accounts' secrets and one of
    their pages' results (:func:`storage.webhook_events.with_results`)."""
    now = now or utcnow()
    chosen = select(_EVENTS.c.id).where(*due_and_free(now))
    if collection_id is not None:
        chosen = chosen.where(_EVENTS.c.collection_id == collection_id)
    if skip_urls:
        chosen = chosen.where(_EVENTS.c.url.not_in(list(skip_urls)))
    chosen = chosen.order_by(_EVENTS.c.next_attempt_at, _EVENTS.c.created_at).limit(limit)
    with db.session() as session:
        return _claim(session, chosen, due_and_free(now), now)


def claim_probes(db: Database, *, limit: int, skip_urls: Collection[str] = (),
                 after: timedelta, now: datetime | None = None) -> list[Claimed]:
    """Hold, for a probe, one event of each of up to ``limit`` receivers (none of
    ``skip_urls``, chosen at random) whose pending events are all waiting for a retry more
    than ``after`` away: a receiver back from an outage is found at the next sweep, not at
    the next retry of its backoff (hours, after a few failures)."""
    now = now or utcnow()
    free = (_EVENTS.c.status == DeliveryStatus.PENDING,
            _EVENTS.c.claimed_until.is_(None) | (_EVENTS.c.claimed_until < now))
    receivers = (select(func.min(_EVENTS.c.id)).where(*free)
                 .group_by(_EVENTS.c.url)
                 .having(func.min(_EVENTS.c.next_attempt_at) > now + after))
    if skip_urls:
        receivers = receivers.where(_EVENTS.c.url.not_in(list(skip_urls)))
    with db.session() as session:
        return _claim(session, receivers.order_by(func.random()).limit(limit), free, now)


def _claim(session: Session, chosen: Select[Any], free: Iterable[ColumnElement[bool]],
           now: datetime) -> list[Claimed]:
    """Hold the events ``chosen`` that are still ``free`` for :data:`CLAIM`, oldest due
    first: with their secrets and bodies to send."""
    until = now + CLAIM
    rows = session.execute(
        update(_EVENTS).where(_EVENTS.c.id.in_(chosen.scalar_subquery()), *free)
        .values(claimed_until=until)
        .returning(_EVENTS.c.id, _EVENTS.c.event, _EVENTS.c.collection_id,
                   _EVENTS.c.url, _EVENTS.c.payload, _EVENTS.c.attempts,
                   _EVENTS.c.account_id, _EVENTS.c.next_attempt_at,
                   _EVENTS.c.created_at)).all()
    if not rows:
        return []
    accounts = {account.id: signing_secrets(account, now) for account in session.scalars(
        select(Account).where(Account.id.in_({row.account_id for row in rows})))}
    bodies = webhook_events.with_results(
        session, [(row.id, row.event, row.collection_id, row.payload) for row in rows])
    rows.sort(key=lambda row: (as_utc(row.next_attempt_at), as_utc(row.created_at)))
    return [Claimed(row.id, row.url, bodies[row.id], row.attempts, accounts[row.account_id],
                    until) for row in rows]


def pull_forward(db: Database, urls: Collection[str], now: datetime | None = None) -> int:
    """Make every pending event to ``urls`` due now (a probe found them answering again);
    how many were waiting."""
    now = now or utcnow()
    with db.session() as session:
        return session.execute(
            update(_EVENTS).where(_EVENTS.c.url.in_(list(urls)),
                                  _EVENTS.c.status == DeliveryStatus.PENDING,
                                  _EVENTS.c.next_attempt_at > now)
            .values(next_attempt_at=now)).rowcount


def release(db: Database, claimed: Iterable[Claimed]) -> int:
    """Give back claims not used (nothing was sent): each event is free at once, unless
    its claim is no longer this one. How many were given back."""
    by_until: dict[datetime, list[str]] = {}
    for event in claimed:
        if event.until is not None:
            by_until.setdefault(event.until, []).append(event.id)
    if not by_until:
        return 0
    with db.session() as session:
        return sum(session.execute(
            update(WebhookEvent).where(WebhookEvent.id.in_(ids),
                                       WebhookEvent.claimed_until == until)
            .values(claimed_until=None)).rowcount for until, ids in by_until.items())


def record_delivered(db: Database, claimed: Iterable[Claimed], *, status: dict[str, int],
                     now: datetime | None = None) -> int:
    """Events of ``claimed`` answered with a 2xx (``status``: id → HTTP status), recorded
    in one statement per status; how many."""
    now = now or utcnow()
    by_status: dict[int, list[tuple[str, int]]] = {}
    for event in claimed:
        by_status.setdefault(status[event.id], []).append((event.id, event.attempts))
    done = 0
    with db.session() as session:
        for code, events in by_status.items():
            for attempts in {made for _, made in events}:
                ids = [event for event, made in events if made == attempts]
                done += session.execute(
                    update(WebhookEvent)
                    .where(WebhookEvent.id.in_(ids), WebhookEvent.attempts == attempts)
                    .values(status=DeliveryStatus.DELIVERED, delivered_at=now,
                            attempts=attempts + 1, last_status=code, last_error=None,
                            next_attempt_at=None, claimed_until=None)).rowcount
    return done


def fail_unsent(db: Database, url: str, error: str, *, collection_id: str | None = None,
                now: datetime | None = None) -> int:
    """Count an attempt, without sending it, for every due and free event to ``url`` (of
    ``collection_id`` when given): its receiver failed time after time just now, and trying
    each of thousands of events would hold a worker for nothing. Each goes on its backoff
    (or fails after its last attempt) as if it had been tried; how many."""
    now = now or utcnow()
    query = update(WebhookEvent).where(WebhookEvent.url == url, *due_and_free(now))
    if collection_id is not None:
        query = query.where(WebhookEvent.collection_id == collection_id)
    after = {made: now + timedelta(seconds=BACKOFF[made]) for made in range(len(BACKOFF))}
    with db.session() as session:
        return session.execute(query.values(
            attempts=WebhookEvent.attempts + 1, last_status=None, last_error=error,
            claimed_until=None,
            status=case((WebhookEvent.attempts + 1 >= ATTEMPTS, DeliveryStatus.FAILED),
                        else_=DeliveryStatus.PENDING),
            next_attempt_at=case(after, value=WebhookEvent.attempts, else_=None))).rowcount
