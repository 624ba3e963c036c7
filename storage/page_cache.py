"""The page cache in the database: successful answers of page operations, shared by every
account, compressed, at most ``CACHE_MAX_BYTES`` in all (the least recently used go first).

Why the database and not Redis: the cache is as large as its cap (hundreds of MB and more),
which belongs on disk, not in the memory Redis needs for the queues; the database is shared
by every API and worker host already, keeps entries across restarts, and a lookup by primary
key costs about a millisecond (docs/design.md, Page cache). Entries are zstd-compressed JSON
(about 6x smaller than the JSON, 0.2 ms to unpack a page: bench/cache_codec.py).

The size in all is one row (:class:`~storage.models.PageCacheTotal`) moved in the transaction
of every store and eviction, so the cap holds without summing the table. ``used_at`` is moved
on a hit at most once per :data:`TOUCH_EVERY`: a popular entry does not cost a write per hit.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import zstandard
from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from storage.db import Database
from storage.models import as_utc, utcnow
from storage.page_models import PageCacheEntry, PageCacheTotal

#: zstd level: the ratio of level 6 zlib, ten times faster (bench/cache_codec.py).
LEVEL = 3
#: An entry's ``used_at`` is moved by a hit at most this often.
TOUCH_EVERY = timedelta(minutes=5)
#: An entry larger than this share of the cap is not kept (1/10: one huge map does not empty
#: the cache).
MAX_SHARE = 10
#: Entries evicted per statement while the cache is over its cap.
EVICT_BATCH = 100

#: zstd's compressor and decompressor objects must not be shared between threads (the API's
#: and a worker's threads would crash the process): one pair per thread.
_codecs = threading.local()


def _codec() -> tuple[zstandard.ZstdCompressor, zstandard.ZstdDecompressor]:
    pair = getattr(_codecs, "pair", None)
    if pair is None:
        pair = _codecs.pair = (zstandard.ZstdCompressor(level=LEVEL),
                               zstandard.ZstdDecompressor())
    return pair


@dataclass(frozen=True)
class Entry:
    """A cached answer: the job's result, when it was fetched (or confirmed by a 304), and the
    response's validators for the next conditional request."""

    key: str
    result: dict[str, Any]
    cached_at: datetime
    used_at: datetime
    etag: str | None = None
    last_modified: str | None = None

    def age(self, now: datetime | None = None) -> float:
        """Seconds since it was fetched or confirmed."""
        return ((now or utcnow()) - self.cached_at).total_seconds()


def pack(result: dict[str, Any]) -> bytes:
    return _codec()[0].compress(json.dumps(result, separators=(",", ":")).encode())


def unpack(body: bytes) -> dict[str, Any]:
    return json.loads(_codec()[1].decompress(body))


def pack_text(text: str) -> bytes:
    """``text`` compressed as the cache compresses its entries (change tracking's versions)."""
    return _codec()[0].compress(text.encode())


def unpack_text(body: bytes) -> str:
    return _codec()[1].decompress(body).decode()


_COLUMNS = (PageCacheEntry.key, PageCacheEntry.body, PageCacheEntry.cached_at,
            PageCacheEntry.used_at, PageCacheEntry.etag, PageCacheEntry.last_modified)


def _entry(row: Any) -> Entry:
    return Entry(key=row.key, result=unpack(row.body), cached_at=as_utc(row.cached_at),
                 used_at=as_utc(row.used_at), etag=row.etag, last_modified=row.last_modified)


def get(db: Database, key: str) -> Entry | None:
    """The entry of ``key``, fresh or not; None when there is none."""
    with db.connection() as connection:
        row = connection.execute(select(*_COLUMNS).where(PageCacheEntry.key == key)).first()
    return None if row is None else _entry(row)


def fresh(db: Database, keys: list[str], max_age: int) -> dict[str, Entry]:
    """The entries of ``keys`` at most ``max_age`` seconds old, by key (one query: a
    collection's slice asks for the pages it just leased)."""
    if not keys:
        return {}
    since = utcnow() - timedelta(seconds=max_age)
    with db.connection() as connection:
        rows = connection.execute(select(*_COLUMNS).where(
            PageCacheEntry.key.in_(keys), PageCacheEntry.cached_at >= since)).all()
    return {row.key: _entry(row) for row in rows}


def validators(db: Database, keys: list[str]) -> dict[str, tuple[str | None, str | None]]:
    """The validators (ETag, Last-Modified) of the entries of ``keys`` that have one, fresh or
    not, by key (one query, no body read: a tracked collection's slice asks them for the pages
    it leased, to fetch them conditionally)."""
    if not keys:
        return {}
    with db.connection() as connection:
        rows = connection.execute(select(
            PageCacheEntry.key, PageCacheEntry.etag, PageCacheEntry.last_modified).where(
            PageCacheEntry.key.in_(keys), (PageCacheEntry.etag.is_not(None))
            | (PageCacheEntry.last_modified.is_not(None)))).all()
    return {row.key: (row.etag, row.last_modified) for row in rows}


def touch(db: Database, entry: Entry) -> None:
    """``entry`` was just answered: it becomes the most recently used (at most one write per
    :data:`TOUCH_EVERY`)."""
    now = utcnow()
    if now - entry.used_at < TOUCH_EVERY:
        return
    with db.write() as session:
        _move_total(session, 0)  # the writers' order (see _replace)
        session.execute(update(PageCacheEntry).where(PageCacheEntry.key == entry.key)
                        .values(used_at=now))


def put(db: Database, key: str, *, operation: str, url: str, result: dict[str, Any],
        max_bytes: int, etag: str | None = None, last_modified: str | None = None) -> bool:
    """Keep ``result`` under ``key`` (replacing what was there), then evict the least recently
    used entries until the cache holds at most ``max_bytes``; whether it was kept (not when
    the cache is off, ``max_bytes`` 0, or the entry alone is larger than
    1/:data:`MAX_SHARE` of it)."""
    body = pack(result)
    if len(body) * MAX_SHARE > max_bytes:
        return False
    now = utcnow()
    values = {"operation": operation, "url": url, "body": body, "size": len(body),
              "cached_at": now, "used_at": now, "etag": etag, "last_modified": last_modified}
    for attempt in range(2):
        try:
            with db.write() as session:
                _replace(session, key, values)
                _evict(session, max_bytes)
            return True
        except IntegrityError:  # another process stored the same key first: replace it
            if attempt:
                raise
    return False


def _replace(session: Session, key: str, values: dict[str, Any]) -> None:
    # The size row first, in every writing transaction: it serialises the cache's writers
    # (a replace reads the old size it subtracts; an eviction deletes others' entries), so
    # the total stays exact and no two writers wait on each other's rows.
    _move_total(session, 0)
    old = session.scalar(select(PageCacheEntry.size).where(PageCacheEntry.key == key))
    if old is None:
        session.add(PageCacheEntry(key=key, **values))
        session.flush()
    else:
        session.execute(update(PageCacheEntry).where(PageCacheEntry.key == key).values(**values))
    _move_total(session, values["size"] - (old or 0))


def _move_total(session: Session, delta: int) -> int:
    """Add ``delta`` to the cache's size; the new size."""
    return session.scalar(update(PageCacheTotal).where(PageCacheTotal.id == 1)
                          .values(bytes=PageCacheTotal.bytes + delta)
                          .returning(PageCacheTotal.bytes)) or 0


def _evict(session: Session, max_bytes: int) -> None:
    """Delete the least recently used entries while the cache is larger than ``max_bytes``."""
    total = _move_total(session, 0)
    while total > max_bytes:
        oldest = session.execute(select(PageCacheEntry.key, PageCacheEntry.size)
                                 .order_by(PageCacheEntry.used_at).limit(EVICT_BATCH)).all()
        if not oldest:
            return
        dropping, freed = [], 0
        for key, size in oldest:
            dropping.append(key)
            freed += size
            if total - freed <= max_bytes:
                break
        session.execute(delete(PageCacheEntry).where(PageCacheEntry.key.in_(dropping)))
        total = _move_total(session, -freed)


def refresh(db: Database, key: str, *, etag: str | None = None,
            last_modified: str | None = None) -> Entry | None:
    """The page said it has not changed (a 304): its entry counts as fetched now, with the
    304's validators when it gave new ones; the entry, or None when it was evicted
    meanwhile."""
    now = utcnow()
    values: dict[str, Any] = {"cached_at": now, "used_at": now}
    if etag:
        values["etag"] = etag
    if last_modified:
        values["last_modified"] = last_modified
    with db.write() as session:
        _move_total(session, 0)  # the writers' order (see _replace)
        changed = session.execute(update(PageCacheEntry).where(PageCacheEntry.key == key)
                                  .values(**values)).rowcount
    return get(db, key) if changed else None


def forget(db: Database, key: str) -> None:
    """Drop the entry of ``key`` (its page now forbids a shared cache to keep it)."""
    with db.write() as session:
        _move_total(session, 0)  # the writers' order (see _replace)
        old = session.scalar(select(PageCacheEntry.size).where(PageCacheEntry.key == key))
        if old is not None:
            session.execute(delete(PageCacheEntry).where(PageCacheEntry.key == key))
            _move_total(session, -old)


def size(db: Database) -> tuple[int, int]:
    """(entries, bytes) the cache holds."""
    with db.connection() as connection:
        entries = connection.scalar(select(func.count()).select_from(PageCacheEntry)) or 0
        total = connection.scalar(select(PageCacheTotal.bytes).where(PageCacheTotal.id == 1))
    return entries, total or 0


def clear(db: Database) -> int:
    """Forget every entry (an operator's reset); how many there were."""
    with db.write() as session:
        dropped = session.execute(delete(PageCacheEntry)).rowcount
        session.execute(update(PageCacheTotal).where(PageCacheTotal.id == 1).values(bytes=0))
    return dropped
