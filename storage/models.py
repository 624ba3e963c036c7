"""Tables. Money-like state (balances, the ledger) is integer credits, never floats."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

#: SQLite only auto-increments INTEGER PRIMARY KEY; PostgreSQL gets a BIGSERIAL.
BigId = BigInteger().with_variant(Integer(), "sqlite")


def utcnow() -> datetime:
    return datetime.now(UTC)


class Phase(StrEnum):
    """A ledger entry opens a charge or closes it; each at most once per charge."""

    OPEN = "open"
    CLOSE = "close"


class EntryKind(StrEnum):
    """What a ledger entry did: ``reserve``/``grant`` open a charge, ``capture``/``release``
    close it."""

    RESERVE = "reserve"
    CAPTURE = "capture"
    RELEASE = "release"
    GRANT = "grant"


class Outcome(StrEnum):
    """``status`` of a line of activity history (the API shows it as is)."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"


class Base(DeclarativeBase):
    pass


#: ``max_concurrent_requests`` of a plan made without one (the ``free`` plan's): the database's
#: server default too, so a plan inserted by older code gets it.
DEFAULT_MAX_CONCURRENT_REQUESTS = 4


class Plan(Base):
    """What an account may do: request rate, requests in flight and collection sizes."""

    __tablename__ = "plans"
    __table_args__ = (CheckConstraint("max_concurrent_requests >= 1",
                                      name="ck_plans_max_concurrent_requests_positive"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    requests_per_minute: Mapped[int] = mapped_column(Integer)
    max_batch_urls: Mapped[int] = mapped_column(Integer)
    max_crawl_pages: Mapped[int] = mapped_column(Integer)
    max_running_collections: Mapped[int] = mapped_column(Integer)
    #: Single-page jobs of one account on the workers at once (``api.inflight``), so that one
    #: account cannot fill every worker slot. At least 1: there is no "unlimited" value (an
    #: operator who wants none gives a number above the deployment's worker slots).
    max_concurrent_requests: Mapped[int] = mapped_column(
        Integer, default=DEFAULT_MAX_CONCURRENT_REQUESTS,
        server_default=str(DEFAULT_MAX_CONCURRENT_REQUESTS))


class Account(Base):
    """One customer: one balance, any number of API keys."""

    __tablename__ = "accounts"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    plan_id: Mapped[int] = mapped_column(ForeignKey("plans.id"))
    #: Credits available now (reservations already deducted). Changed only by storage.ledger.
    balance: Mapped[int] = mapped_column(BigInteger, default=0)
    webhook_secret: Mapped[str] = mapped_column(String(80))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    plan: Mapped[Plan] = relationship(lazy="joined")


class ApiKey(Base):
    """A key is shown once, at creation; only its SHA-256 is kept."""

    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"), index=True)
    #: The first characters of the key, to name it in listings and ``keys revoke``.
    prefix: Mapped[str] = mapped_column(String(32), index=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class LedgerEntry(Base):
    """Append-only record of every balance change.

    A charge is opened once (``reserve``: -n, or ``grant``: +n) and closed at most once
    (``capture``: 0, or ``release``: +n), enforced by the unique (charge_key, phase) pair: the
    database itself refuses a second reservation or a second settlement of the same charge.
    The balance always equals the sum of ``amount`` over an account's entries.
    """

    __tablename__ = "ledger_entries"
    __table_args__ = (UniqueConstraint("charge_key", "phase", name="uq_ledger_charge_phase"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"), index=True)
    charge_key: Mapped[str] = mapped_column(String(120))
    # Plain strings in the database (no enum type to migrate): a Phase and an EntryKind.
    phase: Mapped[str] = mapped_column(String(8))
    kind: Mapped[str] = mapped_column(String(16))
    amount: Mapped[int] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    #: On a reservation: when its request is over for sure (its wait plus a grace period).
    #: Still open then, it was abandoned (a killed process, a settle that kept failing) and
    #: the sweeper releases it (``storage.ledger.release_expired``). NULL: never swept.
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), index=True)
    # What the sweeper needs to write the abandoned request's line of history.
    operation: Mapped[str | None] = mapped_column(String(40))
    request_id: Mapped[str | None] = mapped_column(String(64))
    collection_id: Mapped[str | None] = mapped_column(String(40))
    url: Mapped[str | None] = mapped_column(Text)


class Activity(Base):
    """One row per request (billed or not) and per operator grant: the account's history."""

    __tablename__ = "activity"
    __table_args__ = (Index("ix_activity_account_id_id", "account_id", "id"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"))
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    operation: Mapped[str] = mapped_column(String(40))
    #: Credits charged; negative for grants, so the balance is minus their sum.
    credits: Mapped[int] = mapped_column(BigInteger, default=0)
    status: Mapped[str] = mapped_column(String(16))  # an Outcome, stored as its string
    request_id: Mapped[str | None] = mapped_column(String(64))
    collection_id: Mapped[str | None] = mapped_column(String(40))
    url: Mapped[str | None] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(String(40))


class IdempotencyRecord(Base):
    """The first response to an ``Idempotency-Key``, replayed for 24 hours.

    The unique (account, key) pair is the lock: the request whose insert wins runs, every
    other one reads the row (see storage.idempotency).
    """

    __tablename__ = "idempotency_records"
    __table_args__ = (UniqueConstraint("account_id", "key", name="uq_idempotency_account_key"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"))
    key: Mapped[str] = mapped_column(String(255))
    request_hash: Mapped[str] = mapped_column(String(64))
    state: Mapped[str] = mapped_column(String(16))  # in_flight | done
    #: The request that holds the key (in flight) or answered first (done).
    request_id: Mapped[str | None] = mapped_column(String(64))
    response_status: Mapped[int | None] = mapped_column(Integer)
    response_body: Mapped[str | None] = mapped_column(Text)
    #: The replayed headers of the first answer (``X-Credits-*``), as a JSON object.
    response_headers: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
