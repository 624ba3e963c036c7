"""Webhook secrets and the outbox of webhook events: the only code that speaks SQL about them.

Delivery is at least once and durable: an event is a row written in the transaction of its
collection's terminal transition (:func:`add_event`), so it exists exactly when the transition
does, whatever happens to Redis or to the process afterwards. Senders :func:`claim` it (one
conditional ``UPDATE``: two workers never send one attempt twice), send it, and
:func:`record` the attempt, which schedules the next one on :data:`BACKOFF` until a 2xx or the
last attempt.
"""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, select, update
from sqlalchemy.orm import Session

from core.changes import CHANGES
from core.contract import (
    DEFAULT_EVENTS,
    END_EVENTS,
    LOW_BALANCE_EVENT,
    PAGE_EVENT,
    STARTED_EVENT,
)
from core.operations import ACCOUNT_UPDATE, WEBHOOK_SECRET
from storage.db import Database
from storage.models import (
    Account,
    Activity,
    Collection,
    DeliveryStatus,
    Outcome,
    WebhookEvent,
    as_utc,
    utcnow,
)
from storage.monitor_models import Monitor

#: Seconds to wait after each failed attempt before the next one: 7 attempts over 17.5 hours
#: (the Standard Webhooks / Svix schedule, without its last 10 h), so a receiver that is down
#: for a deploy, an afternoon or a night still gets the event.
BACKOFF = (5, 300, 1800, 7200, 18000, 36000)
ATTEMPTS = len(BACKOFF) + 1
#: How long a sender holds an event it claimed: longer than one attempt can take (its
#: timeout), short enough that a killed sender's event is soon sent by another.
CLAIM = timedelta(seconds=60)
#: How long the secret before a rotation keeps signing.
ROTATION_OVERLAP = timedelta(hours=24)
#: ``operation`` of the history line of a rotation.
SECRET_OPERATION = WEBHOOK_SECRET.name
#: The event of each final status: of a collection (core.contract declares a collection's
#: events), of a monitor's run.
EVENTS, STARTED, PAGE, LOW_BALANCE = END_EVENTS, STARTED_EVENT, PAGE_EVENT, LOW_BALANCE_EVENT
MONITOR_EVENTS = {"completed": "monitor.run.completed", "cancelled": "monitor.run.cancelled",
                  "failed": "monitor.run.failed"}


def new_secret() -> str:
    """A Standard Webhooks secret: ``whsec_`` and the base64 of 32 random bytes (the key)."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def rotate_secret(db: Database, account_id: str, request_id: str | None = None
                  ) -> tuple[str, datetime]:
    """A new secret for the account, with the request's line of history (operation
    ``webhook_secret``: who rotated it, and when, is worth finding again); the one before
    keeps signing until the time returned."""
    secret, now = new_secret(), utcnow()
    with db.write() as session:
        session.execute(
            update(Account).where(Account.id == account_id)
            .values(previous_webhook_secret=Account.webhook_secret, webhook_secret=secret,
                    webhook_secret_rotated_at=now))
        session.add(Activity(account_id=account_id, operation=SECRET_OPERATION, credits=0,
                             status=Outcome.SUCCEEDED, request_id=request_id))
    return secret, now + ROTATION_OVERLAP


def update_settings(db: Database, account_id: str, values: dict[str, Any],
                    request_id: str | None = None) -> Account:
    """Change the account's webhook settings (``webhook_url``, ``low_balance_threshold``),
    with the request's line of history (operation ``account_update``); the account after. A
    new threshold is armed afresh: its first fall below it is told."""
    with db.write() as session:
        if values:
            if "low_balance_threshold" in values:
                values = {**values, "low_balance_notified": False}
            session.execute(update(Account).where(Account.id == account_id).values(**values))
        session.add(Activity(account_id=account_id, operation=ACCOUNT_UPDATE.name, credits=0,
                             status=Outcome.SUCCEEDED, request_id=request_id))
        row = session.scalar(select(Account).where(Account.id == account_id))
        assert row is not None
        return row


def event_id(collection_id: str) -> str:
    """The id of a collection's event (there is at most one): ``evt_`` and the collection's
    own random part, so a caller that finished a collection can ask for its delivery
    without reading the row back."""
    return "evt_" + collection_id.removeprefix("col_")


def events_of(row: Collection) -> tuple[str, ...]:
    """The events collection ``row`` asked for (none without a ``webhook_url``)."""
    if not row.webhook_url:
        return ()
    return tuple(row.webhook_events.split(",")) if row.webhook_events else DEFAULT_EVENTS


def events_column(events: Iterable[str] | None) -> str | None:
    """``webhook_events`` as the collection's row keeps it (None: the default ones)."""
    chosen = tuple(dict.fromkeys(events)) if events is not None else DEFAULT_EVENTS
    return None if set(chosen) == set(DEFAULT_EVENTS) else ",".join(chosen)


def may_call(row: Collection) -> bool:
    """Whether the end of collection ``row`` may write a webhook event (:func:`add_event`):
    it asked for one, or it is a monitor's run."""
    return bool(row.webhook_url or row.monitor_id)


def add_event(session: Session, row: Collection, collection: dict[str, Any]) -> None:
    """Within the transaction that made ``row`` final: its event, if it asked for one — or,
    for a monitor's run, the monitor's (:func:`_monitor_event`)."""
    if row.monitor_id is not None:
        event = _monitor_event(session, row, collection)
        if event is None:
            return
        url, payload = event
    elif EVENTS[row.status] in events_of(row):
        url, payload = row.webhook_url, {"id": event_id(row.id), "event": EVENTS[row.status],
                                         "created_at": collection["finished_at"],
                                         "collection": collection}
    else:
        return
    session.add(WebhookEvent(**outbox_row(payload, url, row.account_id, row.id)))


def outbox_row(payload: dict[str, Any], url: str, account_id: str,
               collection_id: str | None, now: datetime | None = None) -> dict[str, Any]:
    """The columns of a new event: its payload rendered once (every attempt sends these
    bytes), due at once."""
    now = now or utcnow()
    return {"id": payload["id"], "collection_id": collection_id, "account_id": account_id,
            "event": payload["event"], "url": url, "payload": render(payload),
            "created_at": now, "status": DeliveryStatus.PENDING, "attempts": 0,
            "next_attempt_at": now}


def render(payload: dict[str, Any]) -> str:
    """An event's body as sent: compact JSON, UTF-8."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def _monitor_event(session: Session, row: Collection, collection: dict[str, Any]
                   ) -> tuple[str, dict[str, Any]] | None:
    """The URL and payload of a monitor's run event, by the monitor's settings as they are
    now: none without a ``webhook_url``, nor for a completed run that found nothing new,
    changed or removed when it notifies of ``changes`` only."""
    monitor = session.get(Monitor, row.monitor_id)
    if monitor is None or not monitor.webhook_url:
        return None
    changes = collection["progress"]["changes"] or {}
    if (row.status == "completed" and monitor.notify == "changes"
            and not any(changes.get(status) for status in CHANGES)):
        return None
    return monitor.webhook_url, {
        "id": event_id(row.id), "event": MONITOR_EVENTS[row.status],
        "created_at": collection["finished_at"],
        "monitor": {"id": monitor.id, "name": monitor.name}, "changes": changes,
        "collection": collection}


def refresh_payload(db: Database, collection_id: str) -> bool:
    """Render a collection's event again from its row as it is now, while no attempt was made
    nor is under way: a stop records the URLs it left after its transition (the event's
    ``progress.skipped`` then counts them). Whether it was rendered again (every attempt still
    sends the same bytes: none was made with the old ones)."""
    from storage.collections import collection_body  # here: that module imports this one

    with db.write() as session:
        row = session.scalar(select(Collection).where(Collection.id == collection_id))
        event = session.get(WebhookEvent, event_id(collection_id))
        if row is None or event is None or event.attempts or event.claimed_until is not None:
            return False
        payload = json.loads(event.payload)
        payload["collection"] = collection_body(row)
        event.payload = render(payload)
    return True


@dataclass(frozen=True)
class Claimed:
    """An event a sender holds: what to send, where, and with which secrets."""

    id: str
    url: str
    payload: str
    attempts: int  #: made before this one
    secrets: tuple[str, ...]
    #: The claim's end, as written (None: not told), so the claim can be given back.
    until: datetime | None = None


def claim(db: Database, event: str, now: datetime | None = None) -> Claimed | None:
    """Hold ``event`` for one attempt if it is due and nobody holds it; None otherwise."""
    now = now or utcnow()
    with db.session() as session:
        taken = session.execute(
            update(WebhookEvent)
            .where(WebhookEvent.id == event, *due_and_free(now))
            .values(claimed_until=now + CLAIM))
        if taken.rowcount != 1:
            return None
        row, account = session.execute(
            select(WebhookEvent, Account).join(Account, Account.id == WebhookEvent.account_id)
            .where(WebhookEvent.id == event)).one()
        from storage.webhook_events import with_results  # here: that module imports this one

        body = with_results(session, [(row.id, row.event, row.collection_id, row.payload)])
        return Claimed(row.id, row.url, body[row.id], row.attempts,
                       signing_secrets(account, now), now + CLAIM)


def due_and_free(now: datetime) -> tuple[ColumnElement[bool], ...]:
    """A pending event whose next attempt is due and that no sender holds."""
    return (WebhookEvent.status == DeliveryStatus.PENDING, WebhookEvent.next_attempt_at <= now,
            WebhookEvent.claimed_until.is_(None) | (WebhookEvent.claimed_until < now))


def signing_secrets(account: Account, now: datetime) -> tuple[str, ...]:
    """The secrets that sign now: the current one, and the one before for a day after a
    rotation."""
    rotated = account.webhook_secret_rotated_at
    if (account.previous_webhook_secret and rotated
            and now < as_utc(rotated) + ROTATION_OVERLAP):
        return account.webhook_secret, account.previous_webhook_secret
    return (account.webhook_secret,)


def record(db: Database, claimed: Claimed, *, status: int | None, error: str | None,
           now: datetime | None = None) -> str:
    """The outcome of one attempt; the event's status after it."""
    now = now or utcnow()
    attempts = claimed.attempts + 1
    values: dict[str, Any] = {"attempts": attempts, "last_status": status,
                              "last_error": error, "claimed_until": None}
    if status is not None and 200 <= status < 300:
        values.update(status=DeliveryStatus.DELIVERED, delivered_at=now, next_attempt_at=None,
                      last_error=None)
    elif attempts >= ATTEMPTS:
        values.update(status=DeliveryStatus.FAILED, next_attempt_at=None)
    else:
        values.update(next_attempt_at=now + timedelta(seconds=BACKOFF[attempts - 1]))
    with db.session() as session:
        session.execute(update(WebhookEvent).where(WebhookEvent.id == claimed.id,
                                                   WebhookEvent.attempts == claimed.attempts)
                        .values(**values))
    return values.get("status", DeliveryStatus.PENDING)


def due(db: Database, now: datetime | None = None, limit: int = 100) -> list[str]:
    """Ids of pending events whose next attempt is due and that nobody holds, oldest first."""
    now = now or utcnow()
    with db.session() as session:
        return list(session.scalars(
            select(WebhookEvent.id).where(*due_and_free(now))
            .order_by(WebhookEvent.next_attempt_at).limit(limit)))


def deliveries(db: Database, collections: Iterable[Collection]) -> dict[str, dict[str, Any]]:
    """The ``webhook`` field of each collection that asked for its end's event (docs/api.md,
    Collections): its terminal event's delivery (not its start's or pages'), or pending with
    no attempt while it runs."""
    asked = [row.id for row in collections if set(events_of(row)) & set(DEFAULT_EVENTS)]
    if not asked:
        return {}
    with db.session() as session:
        events = {row.collection_id: row for row in session.scalars(
            select(WebhookEvent).where(WebhookEvent.id.in_([event_id(c) for c in asked])))}
    shown: dict[str, dict[str, Any]] = {}
    for collection_id in asked:
        event = events.get(collection_id)
        shown[collection_id] = (
            {"status": event.status, "attempts": event.attempts,
             "last_status": event.last_status} if event else
            {"status": DeliveryStatus.PENDING, "attempts": 0, "last_status": None})
    return shown
