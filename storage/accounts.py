"""Accounts, plans and API keys."""

from __future__ import annotations

import hashlib
import secrets
import unicodedata
from dataclasses import dataclass

from sqlalchemy import Connection, bindparam, select
from sqlalchemy.orm import Session

from storage.models import Account, ApiKey, Plan, utcnow
from storage.webhooks import new_secret

#: Every key starts with this, so leaked keys are easy to recognise (and to scan for).
KEY_PREFIX = "wdp_"
#: Random bytes per key (256 bits of entropy).
KEY_BYTES = 32
#: Characters of a key kept in clear to name it.
PREFIX_LENGTH = 12

#: The plan new accounts get unless told otherwise (plans are seeded by the migrations).
DEFAULT_PLAN = "free"


class AccountError(Exception):
    """Raised for operator mistakes (unknown account or plan, duplicate name)."""


def hash_key(key: str) -> str:
    """Keys carry 256 random bits, so a plain SHA-256 is as strong as a slow hash here."""
    return hashlib.sha256(key.encode()).hexdigest()


def new_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(KEY_BYTES)


@dataclass(frozen=True)
class Principal:
    """Who is calling: what the API needs from an authenticated key, detached from sessions."""

    account_id: str
    name: str
    plan: str
    requests_per_minute: int
    #: Single-page jobs the account may have on the workers at once (``api.inflight``).
    max_concurrent_requests: int
    #: URLs one batch collection may hold: its request body may be that large (``api.auth``).
    max_batch_urls: int
    #: URLs one ``POST /map`` may answer with (its ``limit``'s cap).
    max_map_urls: int
    #: The key it authenticated with: a console session stays valid while this key does.
    key_id: int | None = None


def get_plan(session: Session, name: str) -> Plan:
    plan = session.scalar(select(Plan).where(Plan.name == name))
    if plan is None:
        raise AccountError(f"No plan named {name!r}.")
    return plan


def plan_id(session: Session, name: str) -> int:
    """The id of the plan ``name``; reads no other column, so that accounts can be made on a
    database of any revision (the migration tests make some before upgrading it)."""
    found = session.scalar(select(Plan.id).where(Plan.name == name))
    if found is None:
        raise AccountError(f"No plan named {name!r}.")
    return found


def checked_name(name: str) -> str:
    """``name`` if an account may be called so (1 to 200 characters of text a database
    stores: no control characters, nothing that is not Unicode); else AccountError."""
    if not 0 < len(name) <= 200:
        raise AccountError("An account name has 1 to 200 characters.")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise AccountError(f"{name!r} is not text an account name may hold.") from None
    if any(unicodedata.category(char) == "Cc" for char in name):
        raise AccountError(f"{name!r} has control characters.")
    return name


def get_account(session: Session, name: str) -> Account:
    account = session.scalar(select(Account).where(Account.name == checked_name(name)))
    if account is None:
        raise AccountError(f"No account named {name!r}.")
    return account


def find_account(session: Session, account_id: str) -> Account | None:
    return session.get(Account, account_id)


def create_account(session: Session, name: str, plan: str = DEFAULT_PLAN) -> Account:
    """A new account with a zero balance (grant credits through :mod:`storage.ledger`)."""
    if session.scalar(select(Account.id).where(Account.name == checked_name(name))):
        raise AccountError(f"An account named {name!r} exists already.")
    account = Account(
        id="acct_" + secrets.token_hex(8),
        name=name,
        plan_id=plan_id(session, plan),
        balance=0,
        webhook_secret=new_secret(),
    )
    session.add(account)
    session.flush()
    return account


def create_key(session: Session, account: Account) -> str:
    """A new key for ``account``; the only time the key itself is seen."""
    key = new_key()
    session.add(ApiKey(account_id=account.id, prefix=key[:PREFIX_LENGTH], key_hash=hash_key(key)))
    session.flush()
    return key


def revoke_keys(session: Session, prefix: str) -> int:
    """Revoke the one live key that starts with ``prefix`` (its first 8 to 12 characters)."""
    if len(prefix) < len(KEY_PREFIX) + 4:
        raise AccountError("Give at least the first 8 characters of the key.")
    matched = session.scalars(
        select(ApiKey).where(
            ApiKey.prefix.startswith(prefix[:PREFIX_LENGTH], autoescape=True),
            ApiKey.revoked_at.is_(None),
        )
    ).all()
    if not matched:
        raise AccountError(f"No live key starts with {prefix!r}.")
    if len(matched) > 1:
        names = ", ".join(row.prefix for row in matched)
        raise AccountError(f"{prefix!r} matches several keys ({names}); give more characters.")
    matched[0].revoked_at = utcnow()
    return 1


#: The caller behind a key hash, as a plain statement built once: every request runs it, and
#: loading the account and plan as ORM objects cost several times the query
#: (docs/benchmarks.md, Scrape latency).
_KEYS, _ACCOUNTS, _PLANS = ApiKey.__table__, Account.__table__, Plan.__table__
_CALLER = (
    select(_ACCOUNTS.c.id, _ACCOUNTS.c.name, _PLANS.c.name, _PLANS.c.requests_per_minute,
           _PLANS.c.max_concurrent_requests, _PLANS.c.max_batch_urls, _PLANS.c.max_map_urls,
           _KEYS.c.id)
    .select_from(_KEYS.join(_ACCOUNTS, _KEYS.c.account_id == _ACCOUNTS.c.id)
                 .join(_PLANS, _PLANS.c.id == _ACCOUNTS.c.plan_id))
    .where(_KEYS.c.key_hash == bindparam("key_hash"), _KEYS.c.revoked_at.is_(None))
)


def authenticate(db: Session | Connection, key: str) -> Principal | None:
    """The caller behind ``key``, or None for an unknown or revoked key; ``db`` is a session
    or a bare connection (``Database.connection``, the API's per-request read)."""
    if not key.startswith(KEY_PREFIX):
        return None
    row = db.execute(_CALLER, {"key_hash": hash_key(key)}).first()
    return Principal(*row) if row else None


def account_of_key(session: Session, key_id: int) -> tuple[Account, Principal] | None:
    """The account (its plan loaded) of the live key ``key_id`` (a console session's) and
    the caller it makes, or None once revoked: one read for what a console page shows."""
    row = session.execute(
        select(Account, Plan)
        .join(ApiKey, ApiKey.account_id == Account.id)
        .join(Plan, Plan.id == Account.plan_id)
        .where(ApiKey.id == key_id, ApiKey.revoked_at.is_(None))
    ).first()
    if row is None:
        return None
    account, plan = row
    return account, Principal(account.id, account.name, plan.name, plan.requests_per_minute,
                              plan.max_concurrent_requests, plan.max_batch_urls,
                              plan.max_map_urls, key_id)


def list_keys(session: Session, account_id: str, *, newest_first: bool = False
              ) -> list[ApiKey]:
    """The account's keys, live and revoked, oldest first (or newest, for the console)."""
    order = ApiKey.id.desc() if newest_first else ApiKey.id
    return list(session.scalars(select(ApiKey).where(ApiKey.account_id == account_id)
                                .order_by(order)))


def revoke_own_key(session: Session, account_id: str, key_id: int) -> bool:
    """Revoke the account's key ``key_id``; False when it has no such key (another account's
    is no different from none). Revoking a revoked key changes nothing and is True."""
    row = session.scalar(select(ApiKey).where(ApiKey.id == key_id,
                                              ApiKey.account_id == account_id))
    if row is None:
        return False
    if row.revoked_at is None:
        row.revoked_at = utcnow()
    return True
