"""Collections and their results: the only code that speaks SQL about them.

Each state change is one short transaction guarded by the collection's status, so concurrent
workers and API requests agree without locks of their own:

- a collection is created ``queued`` with its line of history, after the plan's running cap
  and the balance were checked in the same (write-locked) transaction;
- :func:`storage.collection_store.store` writes a batch of page results, charges 1 credit
  per new successful page and moves the counters, all in one transaction that first touches
  the collection row (a row lock on PostgreSQL, the write lock on SQLite): results of one
  collection are numbered (``seq``) in commit order, and nothing is stored or charged once
  the collection is final;
- exactly one terminal transition happens (:func:`finish`): ``UPDATE … WHERE status IN
  (queued, running)`` and its row count.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from core.changes import REMOVED
from core.formats import format_utc
from core.operations import COLLECTION_CANCEL
from storage import (
    collection_skips,
    monitors,
    page_versions,
    removed_pages,
    webhook_events,
    webhooks,
)
from storage.collection_store import OPERATION
from storage.db import Database
from storage.ledger import InsufficientCredits
from storage.models import (
    LIVE_STATUSES,
    Account,
    Activity,
    Collection,
    CollectionStatus,
    Outcome,
    as_utc,
    utcnow,
)
from storage.monitor_models import RunStatus

#: ``operation`` of the history line of a cancel request.
CANCEL_OPERATION = COLLECTION_CANCEL.name


class CollectionLimit(Exception):
    """Raised by :func:`create` when the account runs as many collections as its plan allows."""

    def __init__(self, limit: int):
        super().__init__(f"This account already runs {limit} collection(s), as many as its "
                         "plan allows; wait for one to finish or cancel one.")
        self.limit = limit


class NotCancellable(Exception):
    """Raised by :func:`cancel` for a collection that is final already."""


def new_id() -> str:
    return "col_" + secrets.token_hex(12)


def create(db: Database, *, account_id: str, mode: str, extract: str, spec: dict[str, Any],
           max_running: int, request_id: str | None = None, url: str | None = None,
           webhook_url: str | None = None, run: tuple[str, datetime] | None = None,
           webhook_events: Sequence[str] | None = None) -> Collection:
    """A new ``queued`` collection and its line of history; raises :class:`CollectionLimit`
    or :class:`InsufficientCredits` (a balance below the first page's credit). ``run``: it is
    the run of monitor ``run[0]`` due at ``run[1]``, whose row is written with it;
    ``webhook_events``: those it asks for (None: the end's)."""
    with db.write() as session:
        # The account's row locked first: two starts at once count one after the other (on
        # PostgreSQL, READ COMMITTED let each count the others' rows as not there yet and
        # both insert; SQLite's write transaction serialises them anyway).
        balance = session.scalar(
            select(Account.balance).where(Account.id == account_id).with_for_update()) or 0
        running = session.scalar(
            select(func.count()).select_from(Collection)
            .where(Collection.account_id == account_id, Collection.status.in_(LIVE_STATUSES)))
        if (running or 0) >= max_running:
            raise CollectionLimit(max_running)
        if balance < 1:
            raise InsufficientCredits(1, balance)
        row = Collection(id=new_id(), account_id=account_id, mode=mode, extract=extract,
                         status=CollectionStatus.QUEUED, spec=json.dumps(spec),
                         webhook_url=webhook_url,
                         webhook_events=webhooks.events_column(webhook_events),
                         request_id=request_id, total=0, succeeded=0,
                         failed=0, robots_blocked=0, credits_used=0, created_at=utcnow(),
                         changes="{}" if "change_tracking" in spec else None,
                         monitor_id=run[0] if run else None)
        session.add(row)
        if run is not None:
            monitors.add_run(session, run[0], run[1], status=RunStatus.RUNNING,
                             collection_id=row.id)
        session.add(Activity(account_id=account_id, operation=OPERATION, credits=0,
                             status=Outcome.SUCCEEDED, request_id=request_id,
                             collection_id=row.id, url=url))
    return row


def get(db: Database, collection_id: str, account_id: str | None = None) -> Collection | None:
    """The collection, if it exists (and belongs to ``account_id``, when given)."""
    query = select(Collection).where(Collection.id == collection_id)
    if account_id is not None:
        query = query.where(Collection.account_id == account_id)
    with db.session() as session:
        return session.scalar(query)


def of_account(db: Database, account_id: str, collection_ids: list[str]) -> list[Collection]:
    """Those of ``collection_ids`` that are the account's collections, in one read."""
    if not collection_ids:
        return []
    with db.session() as session:
        return list(session.scalars(select(Collection).where(
            Collection.id.in_(collection_ids), Collection.account_id == account_id)))


def spec_of(row: Collection) -> dict[str, Any]:
    return json.loads(row.spec)


def tracked(row: Collection) -> bool:
    """Whether the collection tracks changes (its results say ``change``): its counts by
    change exist from its creation (reading its spec would parse a batch's every URL on each
    look at its progress)."""
    return row.changes is not None


def expired(row: Collection, now: datetime | None = None) -> bool:
    """Whether the collection is past its download window (its results gone or going)."""
    return row.expires_at is not None and as_utc(row.expires_at) <= (now or utcnow())


def collection_body(row: Collection) -> dict[str, Any]:
    """The collection object (docs/api.md, Collections), as the API answers it and webhook
    events carry it."""
    return {
        "id": row.id, "mode": row.mode, "extract": row.extract,
        "status": CollectionStatus.EXPIRED if expired(row) else row.status,
        "stop_reason": row.stop_reason,
        "created_at": format_utc(row.created_at),
        "started_at": format_utc(row.started_at) if row.started_at else None,
        "finished_at": format_utc(row.finished_at) if row.finished_at else None,
        "expires_at": format_utc(row.expires_at) if row.expires_at else None,
        "progress": {"total": max(row.total, row.succeeded + row.failed),
                     "done": row.succeeded + row.failed, "succeeded": row.succeeded,
                     "failed": row.failed, "robots_blocked": row.robots_blocked,
                     "skipped": collection_skips.counts(row),
                     "changes": page_versions.counts(row)},
        "credits_used": row.credits_used,
        "monitor_id": row.monitor_id,
    }


def page(db: Database, account_id: str, *, before: tuple[datetime, str] | None = None,
         limit: int = 20) -> tuple[list[Collection], tuple[datetime, str] | None]:
    """The account's collections, newest first: up to ``limit`` after the ``before``
    position (created_at, id); and the position to continue from."""
    query = select(Collection).where(Collection.account_id == account_id)
    if before is not None:
        at, last_id = before
        query = query.where((Collection.created_at < at)
                            | ((Collection.created_at == at) & (Collection.id < last_id)))
    query = query.order_by(Collection.created_at.desc(), Collection.id.desc()).limit(limit + 1)
    with db.session() as session:
        rows = list(session.scalars(query))
    more = len(rows) > limit
    rows = rows[:limit]
    return rows, ((rows[-1].created_at, rows[-1].id) if more and rows else None)


def start(db: Database, collection_id: str) -> bool:
    """``queued`` → ``running``, with its ``collection.started`` event if it asked for one;
    whether this call made the change."""
    with db.session() as session:
        done = session.execute(
            update(Collection)
            .where(Collection.id == collection_id,
                   Collection.status == CollectionStatus.QUEUED)
            .values(status=CollectionStatus.RUNNING, started_at=utcnow()))
        if done.rowcount != 1:
            return False
        row = session.scalar(select(Collection).where(Collection.id == collection_id))
        if row is not None:
            webhook_events.started_event(session, row)
        return True


def report_total(db: Database, collection_id: str, total: int) -> None:
    """Raise ``total`` to ``total`` (it never decreases while the collection runs)."""
    with db.session() as session:
        session.execute(
            update(Collection)
            .where(Collection.id == collection_id, Collection.total < total,
                   Collection.status.in_(LIVE_STATUSES))
            .values(total=total))


def finish(db: Database, collection_id: str, status: CollectionStatus, *,
           retention: timedelta, stop_reason: str | None = None) -> bool:
    """Move a live collection to the final ``status``; whether this call did (exactly one
    caller ever does). A completed collection's ``total`` becomes its ``done``: the pages
    recognised as duplicates only after fetching leave it (see :mod:`collecting.slice`), and
    with change tracking its removed pages are recorded (:mod:`storage.removed_pages`)."""
    values = _final(status, retention, stop_reason)
    if status == CollectionStatus.COMPLETED:
        values["total"] = Collection.succeeded + Collection.failed
    with db.session() as session:
        done = session.execute(
            update(Collection)
            .where(Collection.id == collection_id, Collection.status.in_(LIVE_STATUSES))
            .values(**values))
        if done.rowcount != 1:
            return False
        if status == CollectionStatus.COMPLETED:
            _count_removed(session, collection_id)
        _announce(session, collection_id)
        return True


def _count_removed(session: Session, collection_id: str) -> None:
    """In the transaction of a completion: the pages it did not find again, recorded and
    counted (:mod:`storage.removed_pages`), before its webhook event is written."""
    row = session.scalar(select(Collection).where(Collection.id == collection_id))
    if row is None or not tracked(row):
        return
    numbers = json.loads(row.changes or "{}")
    numbers[REMOVED] = removed_pages.record(session, row)
    row.changes = json.dumps(numbers, sort_keys=True)


def fail_start(db: Database, collection_id: str, *, retention: timedelta,
               stop_reason: str) -> None:
    """A collection that could not be started (its first slice not queued): ``failed`` with
    ``stop_reason``, and its line of history says the request failed, as its answer did."""
    finish(db, collection_id, CollectionStatus.FAILED, retention=retention,
           stop_reason=stop_reason)
    with db.session() as session:
        session.execute(update(Activity).where(Activity.collection_id == collection_id,
                                               Activity.operation == OPERATION)
                        .values(status=Outcome.FAILED))


def _announce(session: Session, collection_id: str) -> None:
    """In the transaction of the terminal transition: a monitor's run takes the outcome, and
    the webhook event is written if one was asked for (so there is exactly one, and only when
    the transition happened)."""
    row = session.scalar(select(Collection).where(Collection.id == collection_id))
    if row is None:
        return
    monitors.run_ended(session, row)
    webhooks.add_event(session, row, collection_body(row))


def _final(status: CollectionStatus, retention: timedelta, stop_reason: str | None
           ) -> dict[str, Any]:
    """The columns of a collection's terminal transition (status, reason, times)."""
    now = utcnow()
    return {"status": status, "stop_reason": stop_reason, "finished_at": now,
            "expires_at": now + retention}


def cancel(db: Database, collection_id: str, account_id: str, *, retention: timedelta,
           request_id: str | None = None) -> Collection | None:
    """Cancel a live collection, with the request's line of history; the row after (None: no
    such collection of the account). Repeating it is harmless (and recorded again); a
    collection that ended otherwise raises NotCancellable."""
    with db.session() as session:
        cancelled = session.execute(
            update(Collection)
            .where(Collection.id == collection_id, Collection.account_id == account_id,
                   Collection.status.in_(LIVE_STATUSES))
            .values(**_final(CollectionStatus.CANCELLED, retention, "cancelled")))
        if cancelled.rowcount == 1:
            _announce(session, collection_id)
        row = session.scalar(select(Collection).where(Collection.id == collection_id,
                                                      Collection.account_id == account_id))
        if row is None:
            return None
        if row.status != CollectionStatus.CANCELLED:
            raise NotCancellable(row.status)
        session.add(Activity(account_id=account_id, operation=CANCEL_OPERATION, credits=0,
                             status=Outcome.SUCCEEDED, request_id=request_id,
                             collection_id=collection_id))
        return row


def running(db: Database, limit: int = 500) -> list[str]:
    """Ids of live collections (oldest first): what the watchdog looks after."""
    with db.session() as session:
        return list(session.scalars(
            select(Collection.id).where(Collection.status.in_(LIVE_STATUSES))
            .order_by(Collection.created_at).limit(limit)))

