"""The tables of pages kept across collections and requests: the page cache's entries and
size, change tracking's versions and the pages a collection found removed."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from storage.models import Base, BigId


class PageCacheEntry(Base):
    """One successful answer of a page operation, shared by every account (pages are public):
    keyed by the operation, the page's canonical URL and the options
    (:func:`core.cache.cache_key`), never by anything of an account's (storage.page_cache)."""

    __tablename__ = "page_cache"
    __table_args__ = (Index("ix_page_cache_used_at", "used_at"),)

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    operation: Mapped[str] = mapped_column(String(40))
    url: Mapped[str] = mapped_column(Text)
    #: The job's result (a page result as a dict), JSON compressed with zstd.
    body: Mapped[bytes] = mapped_column(LargeBinary)
    size: Mapped[int] = mapped_column(Integer)
    #: When the answer was fetched, or last confirmed by a 304.
    cached_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    #: When it was last stored or answered (the least recently used go first).
    used_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    etag: Mapped[str | None] = mapped_column(Text)
    last_modified: Mapped[str | None] = mapped_column(Text)


class PageCacheTotal(Base):
    """The page cache's size in bytes: one row (``id`` 1), moved in the transaction of every
    store and eviction, so the cap holds without summing the table."""

    __tablename__ = "page_cache_total"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    bytes: Mapped[int] = mapped_column(BigInteger, default=0)


class PageVersion(Base):
    """The latest version of a page an account tracks under a tag (change tracking): what the
    next collection of that tag compares the page with (``storage.page_versions``)."""

    __tablename__ = "page_versions"
    __table_args__ = (UniqueConstraint("account_id", "tag", "page_key",
                                       name="uq_page_versions_page"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"))
    tag: Mapped[str] = mapped_column(String(100))
    page_key: Mapped[str] = mapped_column(String(40))
    url: Mapped[str] = mapped_column(Text)
    fetched_at: Mapped[str | None] = mapped_column(String(40))
    digest: Mapped[str] = mapped_column(String(64))
    #: The content compared (markdown or text), zstd-compressed, for the next diff.
    content: Mapped[bytes] = mapped_column(LargeBinary)
    collection_id: Mapped[str] = mapped_column(String(40))
    #: When it was last written: the retention purge deletes it some days after.
    written_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)


class RemovedPage(Base):
    """A page a completed collection with change tracking did not find again: its version,
    written by an earlier collection of the tag, was deleted (``storage.removed_pages``);
    numbered by ``seq`` (1, 2, …) in URL order, what ``GET /collections/{id}/changes`` pages
    by after the results."""

    __tablename__ = "collection_removed"
    __table_args__ = (UniqueConstraint("collection_id", "seq", name="uq_collection_removed_seq"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    collection_id: Mapped[str] = mapped_column(ForeignKey("collections.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)
    url: Mapped[str] = mapped_column(Text)
    page_key: Mapped[str] = mapped_column(String(40))
    #: When the removed version was fetched.
    previous_fetched_at: Mapped[str | None] = mapped_column(String(40))
