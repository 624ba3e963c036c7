"""The books of an account, checked after every fault: what no test about money may skip."""

from __future__ import annotations

from sqlalchemy import exists, func, select
from sqlalchemy.orm import aliased

from storage import ledger
from storage.db import Database
from storage.models import Activity, LedgerEntry, Phase


def open_reservations(db: Database, account_id: str) -> list[str]:
    """Charge keys of the account's charges opened and never closed."""
    close = aliased(LedgerEntry)
    with db.session() as session:
        return list(session.scalars(
            select(LedgerEntry.charge_key)
            .where(LedgerEntry.account_id == account_id, LedgerEntry.phase == Phase.OPEN,
                   LedgerEntry.kind == "reserve",
                   ~exists().where(close.charge_key == LedgerEntry.charge_key,
                                   close.phase == Phase.CLOSE))
        ))


def assert_books(db: Database, account_id: str) -> None:
    """The balance is minus the history's credits and the sum of the ledger's amounts, and no
    reservation is left open."""
    balance = ledger.balance_of(db, account_id)
    with db.session() as session:
        history = session.scalar(select(func.coalesce(func.sum(Activity.credits), 0))
                                 .where(Activity.account_id == account_id))
        entries = session.scalar(select(func.coalesce(func.sum(LedgerEntry.amount), 0))
                                 .where(LedgerEntry.account_id == account_id))
    assert (balance, int(entries)) == (-int(history), balance), (
        f"balance {balance}, history {history}, ledger {entries}")
    assert open_reservations(db, account_id) == []


def assert_books_balance(app, account_id: str) -> None:
    """:func:`assert_books` for an app's database."""
    assert_books(app.extensions["webdata.db"], account_id)
