"""Tables. Money-like state (balances, the ledger) is integer credits, never floats."""

from __future__ import annotations

from contextvars import ContextVar
from datetime import UTC, datetime
from enum import StrEnum

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

#: SQLite only auto-increments INTEGER PRIMARY KEY; PostgreSQL gets a BIGSERIAL.
BigId = BigInteger().with_variant(Integer(), "sqlite")


#: The channel of the request being served in this thread (``api``, ``console``, ``mcp``),
#: set by the API for each request: every line of history written meanwhile is marked with it
#: (None: a line the platform wrote itself: a monitor's run, a released reservation).
CHANNEL: ContextVar[str | None] = ContextVar("channel", default=None)


def utcnow() -> datetime:
    return datetime.now(UTC)


def as_utc(moment: datetime) -> datetime:
    """A stored time, aware and in UTC: SQLite hands back naive datetimes (every time stored
    is UTC), PostgreSQL aware ones in the session's time zone."""
    return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)


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
#: ``max_map_urls`` of a plan made without one (the ``free`` plan's): the server default too.
DEFAULT_MAX_MAP_URLS = 5000
#: ``max_monitors`` of a plan made without one (the ``free`` plan's): the server default too.
DEFAULT_MAX_MONITORS = 2


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
    #: The most URLs one ``POST /map`` may ask for (its ``limit``).
    max_map_urls: Mapped[int] = mapped_column(
        Integer, default=DEFAULT_MAX_MAP_URLS, server_default=str(DEFAULT_MAX_MAP_URLS))
    #: The most monitors the account may have (paused ones count).
    max_monitors: Mapped[int] = mapped_column(
        Integer, default=DEFAULT_MAX_MONITORS, server_default=str(DEFAULT_MAX_MONITORS))


class Account(Base):
    """One customer: one balance, any number of API keys."""

    __tablename__ = "accounts"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    plan_id: Mapped[int] = mapped_column(ForeignKey("plans.id"))
    #: Credits available now (reservations already deducted). Changed only by storage.ledger.
    balance: Mapped[int] = mapped_column(BigInteger, default=0)
    #: The Standard Webhooks signing secret (``whsec_`` + base64 of 32 random bytes): made with
    #: the account, shown only when ``POST /account/webhook-secret`` rotates it.
    webhook_secret: Mapped[str] = mapped_column(String(80))
    #: The secret before the last rotation: it still signs for a day after it (two ``v1,``
    #: signatures), so receivers can switch without losing a delivery.
    previous_webhook_secret: Mapped[str | None] = mapped_column(String(80))
    webhook_secret_rotated_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    #: Where the account's own events go (``account.low_balance``); None: nowhere.
    webhook_url: Mapped[str | None] = mapped_column(Text)
    #: ``account.low_balance`` is sent when the balance falls below it; None: never.
    low_balance_threshold: Mapped[int | None] = mapped_column(BigInteger)
    #: The event was sent for the current fall: set by the spend that crossed the threshold,
    #: cleared only by a grant that lifts the balance back to it (storage.ledger).
    low_balance_notified: Mapped[bool] = mapped_column(Boolean, default=False,
                                                       server_default=false())
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
    #: Answered from the page cache (storage.page_cache), not fetched.
    cached: Mapped[bool] = mapped_column(Boolean, default=False)
    #: How the request came (:data:`CHANNEL`).
    channel: Mapped[str | None] = mapped_column(String(16), default=lambda: CHANNEL.get())


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


class CollectionStatus(StrEnum):
    """``status`` of a collection. ``queued`` and ``running`` are live; the others final,
    reached once (a conditional ``UPDATE … WHERE status IN (live)``)."""

    QUEUED = "queued"
    RUNNING = "running"
    COMPLETED = "completed"
    CANCELLED = "cancelled"
    FAILED = "failed"
    EXPIRED = "expired"


#: Statuses of a collection that may still fetch pages.
LIVE_STATUSES = (CollectionStatus.QUEUED, CollectionStatus.RUNNING)


class Collection(Base):
    """A batch of URLs or a crawl of one site, run in the background by the workers.

    The progress counters are written in the same transaction as the results they count
    (``storage.collection_store.store``), so they never disagree with the stored results;
    ``total`` is what the frontier admitted, reported by the workers.
    """

    __tablename__ = "collections"
    __table_args__ = (Index("ix_collections_account_id_created", "account_id", "created_at"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"))
    mode: Mapped[str] = mapped_column(String(8))  # batch | crawl
    extract: Mapped[str] = mapped_column(String(16))  # page | contacts | products
    status: Mapped[str] = mapped_column(String(16), index=True)  # a CollectionStatus
    stop_reason: Mapped[str | None] = mapped_column(String(40))
    #: What was asked, as JSON: the batch's URLs or the crawl's rules.
    spec: Mapped[str] = mapped_column(Text)
    webhook_url: Mapped[str | None] = mapped_column(Text)
    #: The events asked for, comma-separated (storage.webhooks.COLLECTION_EVENTS); None: the
    #: default ones (the end's). A column rather than in ``spec``: every stored batch reads it.
    webhook_events: Mapped[str | None] = mapped_column(String(200))
    request_id: Mapped[str | None] = mapped_column(String(64))
    total: Mapped[int] = mapped_column(Integer, default=0)
    succeeded: Mapped[int] = mapped_column(Integer, default=0)
    failed: Mapped[int] = mapped_column(Integer, default=0)
    robots_blocked: Mapped[int] = mapped_column(Integer, default=0)
    credits_used: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), index=True)
    #: When the retention purge deleted the results (``storage.collections.purge_expired``).
    purged_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    #: The URLs skipped, counted by reason (a JSON object; None: none yet), in the same
    #: transaction as the rows of :class:`CollectionSkip` (``storage.collection_skips``).
    skipped: Mapped[str | None] = mapped_column(Text)
    #: With change tracking: its pages counted by change (new, same, changed; JSON).
    changes: Mapped[str | None] = mapped_column(Text)
    #: The monitor this collection is a run of (``storage.monitors``), if any.
    monitor_id: Mapped[str | None] = mapped_column(String(40), index=True)


class CollectionResult(Base):
    """One page of a collection, stored once: (collection, page key) is unique, and ``seq``
    numbers the results in the order their transactions committed (1, 2, …), which is what
    the results endpoint pages by."""

    __tablename__ = "collection_results"
    __table_args__ = (
        UniqueConstraint("collection_id", "page_key", name="uq_collection_results_page"),
        UniqueConstraint("collection_id", "seq", name="uq_collection_results_seq"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    collection_id: Mapped[str] = mapped_column(ForeignKey("collections.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)
    #: SHA-1 of the page's canonical URL: one result per page, whatever retries happen.
    page_key: Mapped[str] = mapped_column(String(40))
    url: Mapped[str] = mapped_column(Text)
    final_url: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16))  # a PageStatus
    status_code: Mapped[int | None] = mapped_column(Integer)
    fetched_at: Mapped[str | None] = mapped_column(String(40))
    error: Mapped[str | None] = mapped_column(Text)  # JSON
    data: Mapped[str | None] = mapped_column(Text)  # JSON
    #: With change tracking: the page against its previous version (JSON; core.changes).
    change: Mapped[str | None] = mapped_column(Text)


class CollectionSkip(Base):
    """A URL a collection saw and did not fetch, and why: numbered by ``seq`` (1, 2, …) in
    commit order, what ``GET /collections/{id}/skipped`` pages by; at most
    ``storage.collection_skips.KEPT`` per collection (the others only counted)."""

    __tablename__ = "collection_skips"
    __table_args__ = (UniqueConstraint("collection_id", "seq", name="uq_collection_skips_seq"),
                      Index("ix_collection_skips_page", "collection_id", "page_key"))

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    collection_id: Mapped[str] = mapped_column(ForeignKey("collections.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)
    url: Mapped[str] = mapped_column(Text)
    reason: Mapped[str] = mapped_column(String(16))  # a core.contract.SkipReason
    #: The canonical URL of the page a ``duplicate`` duplicates.
    duplicate_of: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    #: Its page's key (``storage.collection_results.page_key``), for change tracking.
    page_key: Mapped[str | None] = mapped_column(String(40))


class DeliveryStatus(StrEnum):
    """``status`` of a webhook event (the collection object's ``webhook.status``)."""

    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"


class WebhookEvent(Base):
    """The outbox: each event written in the transaction of what it tells (a collection's
    terminal transition, its start, a stored page; a balance falling below its threshold), so
    it exists exactly when that happened, and sent by the workers until a 2xx or the last
    attempt (``worker.webhooks``).

    ``payload`` is the body as first rendered: every attempt sends the same bytes, so a
    receiver that deduplicates on ``webhook-id`` sees one event; a page event's holds the
    page and ``"result":null``, its result read from the stored result at each attempt
    (:func:`storage.webhook_events.with_results`).
    """

    __tablename__ = "webhook_events"
    __table_args__ = (Index("ix_webhook_events_due", "status", "next_attempt_at"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    #: The collection's event (its end, its start, one of its pages); None: the account's.
    collection_id: Mapped[str | None] = mapped_column(
        ForeignKey("collections.id", ondelete="CASCADE"), index=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"))
    event: Mapped[str] = mapped_column(String(40))
    url: Mapped[str] = mapped_column(Text)
    payload: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    status: Mapped[str] = mapped_column(String(16))  # a DeliveryStatus
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    #: The HTTP status of the last attempt (None: no answer — refused, timed out, reset).
    last_status: Mapped[int | None] = mapped_column(Integer)
    last_error: Mapped[str | None] = mapped_column(Text)
    next_attempt_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    #: A sender holds the event until then (so two workers never send one attempt twice).
    claimed_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    delivered_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
