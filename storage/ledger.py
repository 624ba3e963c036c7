"""Credits: reserve before the work, capture on success, release on failure.

Every change is one short transaction that moves the balance with a conditional
``UPDATE … WHERE balance >= n RETURNING balance`` (the returned row, not ``rowcount``, says
whether it happened), appends a :class:`LedgerEntry` whose unique (charge_key, phase) makes a
second reservation or settlement of the same charge impossible, and — when the charge is
settled — writes the request's line in the activity history. So nothing is charged twice, a
failed request costs nothing, and the balance is always minus the sum of the history's credits.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from storage.db import Database
from storage.models import Account, Activity, EntryKind, LedgerEntry, Outcome, Phase


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


def _history(charge: Charge, credits: int, status: Outcome, error: str | None = None
             ) -> Activity:
    return Activity(
        account_id=charge.account_id,
        operation=charge.operation,
        credits=credits,
        status=status,
        request_id=charge.request_id,
        collection_id=charge.collection_id,
        url=charge.url,
        error=error,
    )


def reserve(db: Database, charge: Charge) -> int:
    """Hold ``charge.amount`` credits; returns the balance left. Raises InsufficientCredits."""
    with db.write() as session:
        balance = session.scalar(
            update(Account)
            .where(Account.id == charge.account_id, Account.balance >= charge.amount)
            .values(balance=Account.balance - charge.amount)
            .returning(Account.balance)
        )
        if balance is None:
            current = session.scalar(select(Account.balance).where(Account.id == charge.account_id))
            raise InsufficientCredits(charge.amount, current or 0)
        session.add(LedgerEntry(account_id=charge.account_id, charge_key=charge.key,
                                phase=Phase.OPEN, kind=EntryKind.RESERVE, amount=-charge.amount))
        try:
            session.flush()
        except IntegrityError:
            raise ChargeSettled(f"Charge {charge.key} was reserved already.") from None
    return balance


def capture(db: Database, charge: Charge) -> int:
    """Keep the reserved credits: the request succeeded. Returns the balance."""
    with db.write() as session:
        session.add(LedgerEntry(account_id=charge.account_id, charge_key=charge.key,
                                phase=Phase.CLOSE, kind=EntryKind.CAPTURE, amount=0))
        session.add(_history(charge, charge.amount, Outcome.SUCCEEDED))
        try:
            session.flush()
        except IntegrityError:
            raise ChargeSettled(f"Charge {charge.key} was settled already.") from None
        return session.scalar(select(Account.balance).where(Account.id == charge.account_id)) or 0


def release(db: Database, charge: Charge, error: str | None = None) -> int:
    """Give the reserved credits back: the request failed. Returns the balance.

    Releasing a charge that was settled already changes nothing (a retry after a crash).
    """
    with db.write() as session:
        settled = session.scalar(
            select(LedgerEntry.kind).where(
                LedgerEntry.charge_key == charge.key, LedgerEntry.phase == Phase.CLOSE
            )
        )
        if settled:
            balance = select(Account.balance).where(Account.id == charge.account_id)
            return session.scalar(balance) or 0
        session.add(LedgerEntry(account_id=charge.account_id, charge_key=charge.key,
                                phase=Phase.CLOSE, kind=EntryKind.RELEASE, amount=charge.amount))
        balance = session.scalar(
            update(Account)
            .where(Account.id == charge.account_id)
            .values(balance=Account.balance + charge.amount)
            .returning(Account.balance)
        )
        session.add(_history(charge, 0, Outcome.FAILED, error))
        return balance or 0


def record_failure(db: Database, charge: Charge, error: str) -> None:
    """A request that failed before any credit was reserved: history only, 0 credits."""
    with db.session() as session:
        session.add(_history(charge, 0, Outcome.FAILED, error))


def grant(db: Database, account_id: str, amount: int, key: str) -> int:
    """Add (or with a negative amount, remove) credits as the operator; returns the balance."""
    charge = Charge(account_id, key, -amount, "credit_grant")
    with db.write() as session:
        balance = session.scalar(
            update(Account)
            .where(Account.id == account_id, Account.balance + amount >= 0)
            .values(balance=Account.balance + amount)
            .returning(Account.balance)
        )
        if balance is None:
            current = session.scalar(select(Account.balance).where(Account.id == account_id))
            raise InsufficientCredits(-amount, current or 0)
        session.add(LedgerEntry(account_id=account_id, charge_key=key, phase=Phase.OPEN,
                                kind=EntryKind.GRANT, amount=amount))
        session.add(_history(charge, -amount, Outcome.SUCCEEDED))
    return balance


def balance_of(db: Database, account_id: str) -> int:
    with db.session() as session:
        return session.scalar(select(Account.balance).where(Account.id == account_id)) or 0
