"""The URLs a collection saw and did not fetch, with their reasons (docs/api.md, Skipped
URLs): written in the transaction that stores a batch of results
(:func:`storage.collection_store.store`, under the collection's row lock) or, for the URLs left
when a collection ends, in one of their own (:func:`record_left`); read back a page at a
time by ``GET /collections/{id}/skipped`` and the export.

Which URL is a skip, once, is the frontier's decision (:meth:`collecting.frontier.Frontier.decide`);
here each is counted by reason on the collection (``collections.skipped``, a JSON object) and
kept as a row while the collection has fewer than :data:`KEPT` (the others only counted).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Protocol

from sqlalchemy import insert, select, update
from sqlalchemy.orm import Session

from core.contract import SKIP_REASONS
from storage.collection_results import page_key
from storage.db import Database
from storage.models import Collection, CollectionResult, CollectionSkip, utcnow

#: Skipped URLs kept per collection; past them, only counted.
KEPT = 100_000


class Skipped(Protocol):
    """One skipped URL as a worker hands it to ``store`` (:class:`collecting.frontier.Skip`
    is one)."""

    @property
    def url(self) -> str: ...

    @property
    def key(self) -> str: ...  # its canonical URL

    @property
    def reason(self) -> str: ...

    @property
    def duplicate_of(self) -> str | None: ...


def counts(row: Collection) -> dict[str, int]:
    """The collection's skipped URLs by reason, every reason present (0 when none)."""
    stored = json.loads(row.skipped) if row.skipped else {}
    return {reason: int(stored.get(reason, 0)) for reason in SKIP_REASONS}


def write(session: Session, collection_id: str, counted: str | None,
          skipped: Sequence[Skipped]) -> None:
    """In the transaction holding the collection's row lock: count ``skipped`` on the
    collection, whose counts were ``counted`` when locked, and keep as many rows of them as
    :data:`KEPT` allows; one insert."""
    if not skipped:
        return
    numbers: dict[str, int] = json.loads(counted) if counted else {}
    kept = min(sum(numbers.values()), KEPT)
    room = max(0, KEPT - kept)
    if room:
        now = utcnow()
        session.execute(insert(CollectionSkip), [
            {"collection_id": collection_id, "seq": kept + number, "url": skip.url,
             "reason": str(skip.reason), "duplicate_of": skip.duplicate_of, "created_at": now,
             "page_key": page_key(skip.key)}
            for number, skip in enumerate(skipped[:room], start=1)])
    for skip in skipped:
        numbers[str(skip.reason)] = numbers.get(str(skip.reason), 0) + 1
    session.execute(update(Collection)
                    .where(Collection.id == collection_id)
                    .values(skipped=json.dumps(numbers, sort_keys=True)))


def record_left(db: Database, collection_id: str, skipped: Sequence[Skipped]) -> int:
    """Record ``skipped``: URLs a collection that is over (or ending) will never fetch, in a
    transaction of their own whatever its status. One whose page was stored after all (a
    slice stored it just before the stop, and had not let go of it yet) is no skip. How many
    were recorded."""
    if not skipped:
        return 0
    with db.write() as session:
        locked = session.execute(
            update(Collection).where(Collection.id == collection_id)
            .values(skipped=Collection.skipped).returning(Collection.skipped)).first()
        if locked is None:
            return 0
        stored = set(session.scalars(select(CollectionResult.page_key).where(
            CollectionResult.collection_id == collection_id,
            CollectionResult.page_key.in_({page_key(skip.key) for skip in skipped}))))
        left = [skip for skip in skipped if page_key(skip.key) not in stored]
        write(session, collection_id, locked[0], left)
    return len(left)


def page(db: Database, collection_id: str, *, after: int = 0, limit: int = 100,
         reason: str | None = None) -> tuple[list[CollectionSkip], int | None]:
    """Skipped URLs in the order they were recorded after position ``after``: at most
    ``limit``, and the position to continue from (None at the end of what is stored now)."""
    query = select(CollectionSkip).where(CollectionSkip.collection_id == collection_id,
                                         CollectionSkip.seq > after)
    if reason is not None:
        query = query.where(CollectionSkip.reason == reason)
    with db.session() as session:
        rows = list(session.scalars(query.order_by(CollectionSkip.seq).limit(limit + 1)))
    more = len(rows) > limit
    rows = rows[:limit]
    return rows, (rows[-1].seq if more and rows else None)


def body(row: CollectionSkip) -> dict[str, Any]:
    """A skipped URL as the API answers it."""
    return {"url": row.url, "reason": row.reason, "duplicate_of": row.duplicate_of}
