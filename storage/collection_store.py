"""Storing a batch of a collection's page results: one transaction that stores the new ones,
charges 1 credit per new success, moves the counters and records the batch's skipped URLs
and, with change tracking, the pages' versions (:mod:`storage.collections` holds the rest of
a collection's life, and re-exports these)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.orm import Session

from core.operations import COLLECTION
from storage import collection_skips, page_versions, webhook_events
from storage.db import Database
from storage.models import (
    LIVE_STATUSES,
    Account,
    Activity,
    Collection,
    CollectionResult,
    EntryKind,
    LedgerEntry,
    Outcome,
    Phase,
    utcnow,
)

#: ``operation`` of a collection's ledger entries and line of history.
OPERATION = COLLECTION.name


@dataclass
class PageOutcome:
    """One page's result as a worker hands it to :func:`store`."""

    key: str  #: :func:`~storage.collection_results.page_key` of the page's canonical URL
    url: str
    status: str  #: a PageStatus
    final_url: str | None = None
    status_code: int | None = None
    fetched_at: str | None = None
    error: dict[str, Any] | None = None
    data: Any = None
    robots_blocked: bool = False
    #: With change tracking: the page against its previous version (core.changes.Change).
    change: dict[str, Any] | None = None


@dataclass
class Stored:
    """What :func:`store` did with a batch."""

    #: Keys of the outcomes that are stored now (new ones) or were before (retries).
    settled: list[str] = field(default_factory=list)
    charged: int = 0
    #: The collection is final: nothing was stored (a cancel, a finish won the race).
    closed: bool = False
    #: The balance could not pay for every successful page: the ones it could not were not
    #: stored, and the collection must stop.
    out_of_credits: bool = False
    #: ``collection.page`` events written (one per page stored now), for a sender to drain.
    events: int = 0


def store(db: Database, collection_id: str, outcomes: Sequence[PageOutcome],
          skipped: Sequence[collection_skips.Skipped] = (),
          versions: Sequence[page_versions.Version] = (), tag: str | None = None) -> Stored:
    """Store new page results, charge 1 credit per new successful one, move the counters,
    record the URLs ``skipped`` (:mod:`storage.collection_skips`); one transaction. Pages
    stored already (a retry after a lost lease) are skipped, so a page is stored and charged
    at most once."""
    report = Stored()
    with db.write() as session:
        locked = session.execute(
            update(Collection)
            .where(Collection.id == collection_id, Collection.status.in_(LIVE_STATUSES))
            .values(succeeded=Collection.succeeded)
            .returning(Collection.account_id, Collection.succeeded + Collection.failed,
                       Collection.skipped, Collection.changes, Collection.webhook_url,
                       Collection.webhook_events)
        ).first()
        if locked is None:
            report.closed = True
            return report
        account_id, done, counted, changes, webhook_url, events = locked
        collection_skips.write(session, collection_id, counted, skipped)
        keys = [outcome.key for outcome in outcomes]
        known = set(session.scalars(
            select(CollectionResult.page_key)
            .where(CollectionResult.collection_id == collection_id,
                   CollectionResult.page_key.in_(keys))))
        report.settled.extend(known)
        fresh: list[PageOutcome] = []
        for outcome in outcomes:
            if outcome.key not in known:
                known.add(outcome.key)
                fresh.append(outcome)
        paid = _charge(session, account_id,
                       sum(outcome.status == Outcome.SUCCEEDED for outcome in fresh))
        unpaid = sum(outcome.status == Outcome.SUCCEEDED for outcome in fresh) - paid
        if unpaid:
            report.out_of_credits = True
            fresh = _drop_last_successes(fresh, unpaid)
        written = _write(session, collection_id, account_id, fresh, done)
        if webhook_events.wants_pages(webhook_url, events):  # in the guard: once per page
            report.events = webhook_events.page_events(
                session, collection_id, account_id, webhook_url, written)
        if tag is not None:  # the versions of the pages stored now, not of retries
            stored_now = {outcome.key for outcome in fresh}
            page_versions.write(session, collection_id, account_id, tag, changes,
                                [v for v in versions if v.page_key in stored_now])
        report.settled.extend(outcome.key for outcome in fresh)
        report.charged = paid
    return report


def _charge(session: Session, account_id: str, wanted: int) -> int:
    """Take up to ``wanted`` credits (as many as the balance has); how many were taken."""
    if not wanted:
        return 0
    low = (Account.balance, Account.low_balance_threshold, Account.low_balance_notified)
    debited = session.execute(
        update(Account).where(Account.id == account_id, Account.balance >= wanted)
        .values(balance=Account.balance - wanted).returning(*low)).first()
    if debited is not None:
        webhook_events.after_debit(session, account_id, debited[0], wanted, *debited[1:])
        return wanted
    left = session.scalar(select(Account.balance).where(Account.id == account_id)) or 0
    if left <= 0:
        return 0
    debited = session.execute(update(Account).where(Account.id == account_id)
                              .values(balance=Account.balance - left).returning(*low)).one()
    webhook_events.after_debit(session, account_id, debited[0], left, *debited[1:])
    return left


def _drop_last_successes(outcomes: list[PageOutcome], count: int) -> list[PageOutcome]:
    """``outcomes`` without its last ``count`` successful pages (the ones not paid for)."""
    kept: list[PageOutcome] = []
    for outcome in reversed(outcomes):
        if count and outcome.status == Outcome.SUCCEEDED:
            count -= 1
            continue
        kept.append(outcome)
    return kept[::-1]


def _write(session: Session, collection_id: str, account_id: str,
           outcomes: list[PageOutcome], done: int) -> list[dict[str, Any]]:
    """Insert ``outcomes`` numbered after ``done``, their ledger entries and counters; the
    results' columns as inserted."""
    if not outcomes:
        return []
    now = utcnow()
    results = [
        {"collection_id": collection_id, "seq": done + number, "page_key": outcome.key,
         "url": outcome.url, "final_url": outcome.final_url, "status": outcome.status,
         "status_code": outcome.status_code, "fetched_at": outcome.fetched_at,
         "error": json.dumps(outcome.error) if outcome.error is not None else None,
         "data": json.dumps(outcome.data) if outcome.data is not None else None,
         "change": json.dumps(outcome.change) if outcome.change is not None else None}
        for number, outcome in enumerate(outcomes, start=1)]
    session.execute(insert(CollectionResult), results)
    paid = [outcome for outcome in outcomes if outcome.status == Outcome.SUCCEEDED]
    if paid:
        entries = []
        for outcome in paid:
            common = {"account_id": account_id, "charge_key": f"{OPERATION}:{collection_id}:"
                      f"{outcome.key}", "created_at": now, "operation": OPERATION,
                      "collection_id": collection_id, "url": outcome.url}
            entries.append({**common, "phase": Phase.OPEN, "kind": EntryKind.RESERVE,
                            "amount": -1})
            entries.append({**common, "phase": Phase.CLOSE, "kind": EntryKind.CAPTURE,
                            "amount": 0})
        session.execute(insert(LedgerEntry), entries)
        session.execute(update(Activity)
                        .where(Activity.collection_id == collection_id,
                               Activity.account_id == account_id,
                               Activity.operation == OPERATION)
                        .values(credits=Activity.credits + len(paid)))
    failed = len(outcomes) - len(paid)
    session.execute(update(Collection).where(Collection.id == collection_id).values(
        succeeded=Collection.succeeded + len(paid), failed=Collection.failed + failed,
        credits_used=Collection.credits_used + len(paid),
        robots_blocked=Collection.robots_blocked + sum(o.robots_blocked for o in outcomes)))
    return results
