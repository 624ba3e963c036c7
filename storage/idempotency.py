"""Idempotency records: the first response to an ``Idempotency-Key``, kept for 24 hours.

The key is claimed *before* the work by inserting the unique (account, key) row, in its own
short transaction (``INSERT … ON CONFLICT DO NOTHING RETURNING id``): the database lets exactly
one of any number of concurrent requests insert it. Every other request reads the row and is
told what to answer — the stored response, "still running" or "another body". On SQLite the
transaction is ``BEGIN IMMEDIATE`` (serialised); on PostgreSQL a second insert of the same key
waits for the first transaction and then does nothing.

A row stops counting when it expires (24 h after it was claimed) or, while still in flight,
when it is older than the caller's deadline (the request holding it died without releasing
it): such a row is taken over by a conditional update, so two requests cannot both take it.
Expired rows are deleted by :func:`purge` (called now and then by the API; a periodic job may
call it too).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from sqlalchemy import and_, delete, exists, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from storage import ledger
from storage.db import Database
from storage.models import Collection, IdempotencyRecord, as_utc, utcnow

logger = logging.getLogger(__name__)

#: How long a key is remembered (docs/api.md, Idempotency: "Within 24 hours").
TTL = timedelta(hours=24)
#: Rows deleted per statement by :func:`purge` (short transactions, short locks).
PURGE_BATCH = 1000


class State(StrEnum):
    IN_FLIGHT = "in_flight"
    DONE = "done"


@dataclass(frozen=True)
class StoredResponse:
    """The first answer, as it is replayed."""

    status: int
    body: str
    headers: dict[str, str]


@dataclass(frozen=True)
class Claimed:
    """The key is ours: run the request, then :func:`complete` or :func:`release` it."""

    record_id: int
    request_id: str


@dataclass(frozen=True)
class InFlight:
    """Another request with this key and body is still running."""


@dataclass(frozen=True)
class Mismatch:
    """The key was used with another request (body, path or method)."""


@dataclass(frozen=True)
class Replay:
    """The key's request was answered already: answer the same."""

    response: StoredResponse


@dataclass(frozen=True)
class TookEffect:
    """The request that held the key never stored its answer, but it was carried out: it was
    charged, or it started a collection. Run again, it would be carried out (and charged)
    twice; its answer is gone."""

    request_id: str


Outcome = Claimed | InFlight | Mismatch | Replay | TookEffect


def _insert(session: Session):
    """The dialect's INSERT, which knows ``ON CONFLICT DO NOTHING``."""
    return (postgresql.insert if session.get_bind().dialect.name == "postgresql"
            else sqlite.insert)(IdempotencyRecord)


def claim(
    db: Database, account_id: str, key: str, request_hash: str, request_id: str, *,
    abandoned_after: timedelta, now: datetime | None = None,
) -> Outcome:
    """Claim ``key`` for ``request_id``, or say why not (see the module docstring).

    ``request_hash`` identifies the request (method, path and body); ``abandoned_after`` is
    how long a request may hold a key before it counts as dead.
    """
    now = now or utcnow()
    fresh = dict(request_hash=request_hash, state=State.IN_FLIGHT.value, request_id=request_id,
                 response_status=None, response_body=None, response_headers=None,
                 created_at=now, expires_at=now + TTL)
    while True:  # again only when the row went away between our insert and our read
        with db.write() as session:
            outcome = _claim_once(session, account_id, key, request_hash, request_id, fresh,
                                  abandoned_after, now)
        if outcome is not None:
            return outcome


def _claim_once(
    session: Session, account_id: str, key: str, request_hash: str, request_id: str,
    fresh: dict, abandoned_after: timedelta, now: datetime,
) -> Outcome | None:
    record_id = session.scalar(
        _insert(session).values(account_id=account_id, key=key, **fresh)
        .on_conflict_do_nothing(index_elements=["account_id", "key"])
        .returning(IdempotencyRecord.id)
    )
    if record_id is not None:
        return Claimed(record_id, request_id)
    row = session.execute(
        select(IdempotencyRecord.id, IdempotencyRecord.request_hash, IdempotencyRecord.state,
               IdempotencyRecord.request_id,
               IdempotencyRecord.created_at, IdempotencyRecord.expires_at,
               IdempotencyRecord.response_status, IdempotencyRecord.response_body,
               IdempotencyRecord.response_headers)
        .where(IdempotencyRecord.account_id == account_id, IdempotencyRecord.key == key)
    ).one_or_none()
    if row is None:  # released (PostgreSQL: after our insert looked) — try again
        return None
    expired = as_utc(row.expires_at) <= now
    abandoned = row.state == State.IN_FLIGHT and as_utc(row.created_at) <= now - abandoned_after
    if abandoned and not expired and row.request_hash == request_hash \
            and _took_effect(session, account_id, row.request_id):
        return TookEffect(row.request_id)
    if expired or abandoned:
        # Take the dead row over, unless someone else just did (the same test, under the lock).
        taken = session.scalar(
            update(IdempotencyRecord)
            .where(IdempotencyRecord.id == row.id, or_(
                IdempotencyRecord.expires_at <= now,
                and_(IdempotencyRecord.state == State.IN_FLIGHT.value,
                     IdempotencyRecord.created_at <= now - abandoned_after)))
            .values(**fresh)
            .returning(IdempotencyRecord.id)
        )
        if taken is None:
            return InFlight()
        if abandoned and not expired:
            logger.warning("Idempotency key taken over by request %s: the request that held "
                           "it never finished", request_id)
        return Claimed(taken, request_id)
    if row.request_hash != request_hash:
        return Mismatch()
    if row.state == State.IN_FLIGHT:
        return InFlight()
    return Replay(StoredResponse(row.response_status, row.response_body,
                                 json.loads(row.response_headers or "{}")))


def _took_effect(session: Session, account_id: str, request_id: str) -> bool:
    """Whether request ``request_id`` did what a retry would do again: its credits were
    captured, or it started a collection (pages charged as they are stored)."""
    if ledger.captured(session, ledger.request_charge_key(request_id)):
        return True
    return bool(session.scalar(select(exists().where(
        Collection.account_id == account_id, Collection.request_id == request_id))))


def complete(db: Database, claimed: Claimed, response: StoredResponse) -> bool:
    """Store the answer of the claimed request; False if the claim was lost (taken over)."""
    with db.write() as session:
        done = session.scalar(
            update(IdempotencyRecord)
            .where(IdempotencyRecord.id == claimed.record_id,
                   IdempotencyRecord.request_id == claimed.request_id,
                   IdempotencyRecord.state == State.IN_FLIGHT.value)
            .values(state=State.DONE.value, response_status=response.status,
                    response_body=response.body,
                    response_headers=json.dumps(response.headers))
            .returning(IdempotencyRecord.id)
        )
    return done is not None


def release(db: Database, claimed: Claimed) -> None:
    """Forget the claim (the request failed in a way worth retrying): the key is free again."""
    with db.write() as session:
        session.execute(
            delete(IdempotencyRecord)
            .where(IdempotencyRecord.id == claimed.record_id,
                   IdempotencyRecord.request_id == claimed.request_id,
                   IdempotencyRecord.state == State.IN_FLIGHT.value)
        )


def purge(db: Database, now: datetime | None = None) -> int:
    """Delete the expired records, in batches; returns how many went.

    Expired rows are ignored by :func:`claim` already: this only keeps the table small. Safe to
    run from any process at any time (an API process does now and then; a periodic job may).
    """
    now = now or utcnow()
    total = 0
    while True:
        with db.write() as session:
            batch = (select(IdempotencyRecord.id).where(IdempotencyRecord.expires_at <= now)
                     .limit(PURGE_BATCH).scalar_subquery())
            deleted = session.execute(
                delete(IdempotencyRecord).where(IdempotencyRecord.id.in_(batch))
            ).rowcount
        total += deleted
        if deleted < PURGE_BATCH:
            return total
