"""The outbox taken in batches (:mod:`storage.webhooks` holds the one-event path): what a
drain of many events (a collection's pages, the cron sweep) claims, records and, for a
receiver that keeps failing, counts as failed without sending."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from datetime import datetime, timedelta

from sqlalchemy import case, select, update

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
    until = now + CLAIM
    chosen = select(_EVENTS.c.id).where(*due_and_free(now))
    if collection_id is not None:
        chosen = chosen.where(_EVENTS.c.collection_id == collection_id)
    if skip_urls:
        chosen = chosen.where(_EVENTS.c.url.not_in(list(skip_urls)))
    chosen = chosen.order_by(_EVENTS.c.next_attempt_at, _EVENTS.c.created_at).limit(limit)
    with db.session() as session:
        rows = session.execute(
            update(_EVENTS).where(_EVENTS.c.id.in_(chosen.scalar_subquery()),
                                  *due_and_free(now))
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


def any_due(db: Database, collection_id: str | None = None, now: datetime | None = None
              ) -> bool:
    """Whether an event (of ``collection_id`` when given) is due and free."""
    query = select(WebhookEvent.id).where(*due_and_free(now or utcnow()))
    if collection_id is not None:
        query = query.where(WebhookEvent.collection_id == collection_id)
    with db.session() as session:
        return session.scalar(query.limit(1)) is not None
