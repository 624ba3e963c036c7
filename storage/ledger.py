"""Credits: reserve before the work, capture on success, release on failure.

Every change is one short transaction that moves the balance with a conditional
``UPDATE … WHERE balance >= n RETURNING balance`` (the returned row, not ``rowcount``, says
whether it happened), appends a :class:`LedgerEntry` whose unique (charge_key, phase) makes a
second reservation or settlement of the same charge impossible, and — when the charge is
settled — writes the request's line in the activity history. So nothing is charged twice, a
failed request costs nothing, and the balance is always minus the sum of the history's credits.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Select, bindparam, exists, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, aliased

from storage import webhook_events
from storage.db import Database
from storage.models import Account, Activity, EntryKind, LedgerEntry, Outcome, Phase, utcnow

logger = logging.getLogger(__name__)

#: The history's error of a reservation released by the sweeper: its request never settled it
#: (the process serving it was killed, or every settling write failed).
ABANDONED = "abandoned"
#: The operation a grant's line of history names (an operator's, not a request for data).
GRANT_OPERATION = "credit_grant"
#: Reservations a sweep reads at a time.
SWEEP_BATCH = 500


#: The most credits a balance holds: far beyond any plan, and well inside both a 64-bit
#: integer column and a float's exact integers (an overflowing sum turned SQLite's column into
#: floats, and raised on PostgreSQL).
MAX_BALANCE = 10**12


class TooManyCredits(ValueError):
    """Raised by :func:`grant` for an amount that would take a balance past
    :data:`MAX_BALANCE`."""

    def __init__(self, amount: int):
        super().__init__(f"{amount} credits would take the balance past the most one holds, "
                         f"{MAX_BALANCE}.")


class InsufficientCredits(Exception):
    """Raised by :func:`reserve` when the balance cannot cover the cost."""

    def __init__(self, needed: int, balance: int):
        super().__init__(f"This request needs {needed} credits; the balance is {balance}.")
        self.needed = needed
        self.balance = balance


class ChargeSettled(Exception):
    """Raised when a charge key was used already (a retry of the same work)."""


@dataclass(frozen=True)
class Charge:
    """A reservation in flight; settle it with :func:`capture` or :func:`release`."""

    account_id: str
    key: str
    amount: int
    operation: str
    request_id: str | None = None
    collection_id: str | None = None
    url: str | None = None
    #: When the work is over for sure; an open reservation past it is released by the sweeper
    #: (:func:`release_expired`). None: never swept.
    expires_at: datetime | None = None


def _history_values(charge: Charge, credits: int, status: Outcome, error: str | None = None,
                    cached: bool = False) -> dict[str, Any]:
    """The columns of the charge's line of history (``cached``: answered from the page
    cache)."""
    return {"account_id": charge.account_id, "operation": charge.operation, "credits": credits,
            "status": status, "request_id": charge.request_id,
            "collection_id": charge.collection_id, "url": charge.url, "error": error,
            "cached": cached}


def _history(charge: Charge, credits: int, status: Outcome, error: str | None = None
             ) -> Activity:
    return Activity(**_history_values(charge, credits, status, error))


# The statements of every billed request, built once: a request's reservation and capture run
# on a bare connection (``Database.write_transaction``), not through an ORM session, whose unit
# of work cost more than the SQL itself on the path a client waits on (docs/benchmarks.md,
# Scrape latency).
_ACCOUNTS, _ENTRIES, _HISTORY = Account.__table__, LedgerEntry.__table__, Activity.__table__
_DEBIT = (
    update(_ACCOUNTS)
    .where(_ACCOUNTS.c.id == bindparam("account"), _ACCOUNTS.c.balance >= bindparam("amount"))
    .values(balance=_ACCOUNTS.c.balance - bindparam("amount"))
    .returning(_ACCOUNTS.c.balance, _ACCOUNTS.c.low_balance_threshold,
               _ACCOUNTS.c.low_balance_notified)
)
_BALANCE = select(_ACCOUNTS.c.balance).where(_ACCOUNTS.c.id == bindparam("account"))
_ADD_ENTRY = insert(_ENTRIES)
_ADD_HISTORY = insert(_HISTORY)


def _balance(db: Session | Connection, account_id: str) -> int:
    """The account's balance, read in ``db``'s transaction (a session or a bare connection)."""
    return db.scalar(_BALANCE, {"account": account_id}) or 0


def _debit(connection: Connection, charge: Charge) -> int:
    """Take ``charge.amount`` from the balance, in ``connection``'s transaction (with the
    account's low-balance event when it crossed its threshold); the balance left. Raises
    InsufficientCredits (nothing taken)."""
    debited = connection.execute(
        _DEBIT, {"account": charge.account_id, "amount": charge.amount}).first()
    if debited is None:
        raise InsufficientCredits(charge.amount, _balance(connection, charge.account_id))
    balance, threshold, notified = debited
    webhook_events.after_debit(connection, charge.account_id, balance, charge.amount,
                               threshold, notified)
    return balance


def reserve(db: Database, charge: Charge) -> int:
    """Hold ``charge.amount`` credits; returns the balance left. Raises InsufficientCredits."""
    try:
        with db.write_transaction() as connection:
            balance = _debit(connection, charge)
            connection.execute(_ADD_ENTRY, {
                "account_id": charge.account_id, "charge_key": charge.key,
                "phase": Phase.OPEN, "kind": EntryKind.RESERVE, "amount": -charge.amount,
                "expires_at": charge.expires_at, "operation": charge.operation,
                "request_id": charge.request_id, "collection_id": charge.collection_id,
                "url": charge.url})
    except IntegrityError:
        raise ChargeSettled(f"Charge {charge.key} was reserved already.") from None
    return balance


def spend(db: Database, charge: Charge, *, cached: bool = False) -> int:
    """Reserve and capture ``charge`` at once, its line of history written (``cached``: the
    answer came from the page cache): for work that is done already and cannot fail. One
    transaction instead of :func:`reserve` then :func:`capture`'s two: the path of a cache
    hit. Returns the balance; raises InsufficientCredits (nothing written)."""
    try:
        with db.write_transaction() as connection:
            balance = _debit(connection, charge)
            common = {"account_id": charge.account_id, "charge_key": charge.key,
                      "operation": charge.operation, "request_id": charge.request_id,
                      "collection_id": charge.collection_id, "url": charge.url}
            connection.execute(_ADD_ENTRY, [
                {**common, "phase": Phase.OPEN, "kind": EntryKind.RESERVE,
                 "amount": -charge.amount, "expires_at": charge.expires_at},
                {**common, "phase": Phase.CLOSE, "kind": EntryKind.CAPTURE, "amount": 0,
                 "expires_at": None}])
            connection.execute(_ADD_HISTORY, _history_values(
                charge, charge.amount, Outcome.SUCCEEDED, cached=cached))
    except IntegrityError:
        raise ChargeSettled(f"Charge {charge.key} was used already.") from None
    return balance


def request_charge_key(request_id: str) -> str:
    """The charge key of an API request's credits: one charge per request."""
    return f"request:{request_id}"


def captured(session: Session, charge_key: str) -> bool:
    """Whether the charge ``charge_key`` was captured: its credits are spent."""
    return bool(session.scalar(select(exists().where(
        LedgerEntry.charge_key == charge_key, LedgerEntry.phase == Phase.CLOSE,
        LedgerEntry.kind == EntryKind.CAPTURE))))


def capture(db: Database, charge: Charge, *, cached: bool = False) -> int:
    """Keep the reserved credits: the request succeeded (``cached``: with an answer it did
    not fetch itself). Returns the balance."""
    try:
        with db.write_transaction() as connection:
            connection.execute(_ADD_ENTRY, {
                "account_id": charge.account_id, "charge_key": charge.key,
                "phase": Phase.CLOSE, "kind": EntryKind.CAPTURE, "amount": 0})
            connection.execute(_ADD_HISTORY, _history_values(
                charge, charge.amount, Outcome.SUCCEEDED, cached=cached))
            return _balance(connection, charge.account_id)
    except IntegrityError:
        raise ChargeSettled(f"Charge {charge.key} was settled already.") from None


def release(db: Database, charge: Charge, error: str | None = None) -> int:
    """Give the reserved credits back: the request failed. Returns the balance.

    Releasing a charge that was settled already changes nothing (a retry after a crash).
    """
    return _release(db, charge, error)[1]


def _release(db: Database, charge: Charge, error: str | None) -> tuple[bool, int]:
    """(whether this call released the charge, the balance).

    Someone else may close the charge between the check and the insert (on PostgreSQL, where
    no lock serialises writers as SQLite's ``BEGIN IMMEDIATE`` does): the unique (charge_key,
    phase) refuses the second close, and that is "settled already", not an error.
    """
    try:
        with db.write() as session:
            return close_released(session, charge, error)
    except IntegrityError:
        return False, balance_of(db, charge.account_id)


def close_released(session: Session, charge: Charge, error: str | None) -> tuple[bool, int]:
    """In ``session``'s transaction: close ``charge`` as released (credits back, its line of
    history) unless it is closed already; (whether it was closed here, the balance)."""
    settled = session.scalar(_closing_kind(charge))
    if settled:
        return False, _balance(session, charge.account_id)
    session.add(LedgerEntry(account_id=charge.account_id, charge_key=charge.key,
                            phase=Phase.CLOSE, kind=EntryKind.RELEASE, amount=charge.amount))
    balance = session.scalar(
        update(Account)
        .where(Account.id == charge.account_id)
        .values(balance=Account.balance + charge.amount)
        .returning(Account.balance)
    )
    session.add(_history(charge, 0, Outcome.FAILED, error))
    return True, balance or 0


def record_failure(db: Database, charge: Charge, error: str) -> None:
    """A request that failed before any credit was reserved: history only, 0 credits."""
    with db.session() as session:
        session.add(_history(charge, 0, Outcome.FAILED, error))


def grant(db: Database, account_id: str, amount: int, key: str) -> int:
    """Add (or with a negative amount, remove) credits as the operator; returns the balance.
    :class:`TooManyCredits` past :data:`MAX_BALANCE`, :class:`InsufficientCredits` below 0."""
    if abs(amount) > MAX_BALANCE:
        raise TooManyCredits(amount)
    charge = Charge(account_id, key, -amount, GRANT_OPERATION)
    with db.write() as session:
        granted = session.execute(
            update(Account)
            .where(Account.id == account_id, Account.balance + amount >= 0,
                   Account.balance + amount <= MAX_BALANCE)
            .values(balance=Account.balance + amount)
            .returning(Account.balance, Account.low_balance_threshold,
                       Account.low_balance_notified)
        ).first()
        if granted is None and amount > 0:
            raise TooManyCredits(amount)
        if granted is None:
            raise InsufficientCredits(-amount, _balance(session, account_id))
        balance, threshold, notified = granted
        if amount < 0:
            webhook_events.after_debit(session, account_id, balance, -amount, threshold,
                                       notified)
        elif notified:
            webhook_events.rearm(session, account_id)
        session.add(LedgerEntry(account_id=account_id, charge_key=key, phase=Phase.OPEN,
                                kind=EntryKind.GRANT, amount=amount))
        session.add(_history(charge, -amount, Outcome.SUCCEEDED))
    return balance


def expired_reservations(db: Database, now: datetime | None = None,
                         limit: int = SWEEP_BATCH) -> list[Charge]:
    """Reservations still open after their deadline (oldest first): abandoned charges."""
    close = aliased(LedgerEntry)
    settled = exists().where(close.charge_key == LedgerEntry.charge_key,
                             close.phase == Phase.CLOSE)
    with db.session() as session:
        rows = session.scalars(
            select(LedgerEntry)
            .where(LedgerEntry.phase == Phase.OPEN, LedgerEntry.kind == EntryKind.RESERVE,
                   LedgerEntry.expires_at < (now or utcnow()), ~settled)
            .order_by(LedgerEntry.expires_at)
            .limit(limit)
        ).all()
        return [Charge(account_id=row.account_id, key=row.charge_key, amount=-row.amount,
                       operation=row.operation or "unknown", request_id=row.request_id,
                       collection_id=row.collection_id, url=row.url,
                       expires_at=row.expires_at) for row in rows]


def release_expired(db: Database, now: datetime | None = None) -> int:
    """Release every reservation past its deadline, with its line of history; returns how many.

    Idempotent and safe beside anything else settling the same charges: :func:`release`
    changes nothing for a charge closed meanwhile (see :func:`_release`).
    """
    released = 0
    now = now or utcnow()
    while True:
        batch = expired_reservations(db, now, limit=SWEEP_BATCH)
        for charge in batch:
            done, _balance = _release(db, charge, ABANDONED)
            if done:
                released += 1
                logger.warning("Released abandoned reservation %s (%d credits, account %s)",
                               charge.key, charge.amount, charge.account_id)
        if len(batch) < SWEEP_BATCH:
            return released


def closed_by(db: Database, charge: Charge) -> str | None:
    """How ``charge`` was closed (an :class:`EntryKind`: capture or release), or None if open.

    What a settle that hit :class:`ChargeSettled` asks: was it an earlier attempt of its own
    whose commit succeeded unseen, or the sweeper?"""
    with db.session() as session:
        return session.scalar(_closing_kind(charge))


def _closing_kind(charge: Charge) -> Select:
    """The kind of the entry that closed ``charge`` (none while it is open)."""
    return select(LedgerEntry.kind).where(LedgerEntry.charge_key == charge.key,
                                          LedgerEntry.phase == Phase.CLOSE)


def balance_of(db: Database, account_id: str) -> int:
    with db.session() as session:
        return _balance(session, account_id)
