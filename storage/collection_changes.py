"""A collection's changes as ``GET /collections/{id}/changes`` lists them (docs/api.md, Change
tracking): its results' changes in completion order, then, once it is final, its removed
pages (:mod:`storage.removed_pages`) in their order; each entry
``{"url", "status", "fetched_at", "previous_fetched_at", "diff"}``."""

from __future__ import annotations

import json
from collections.abc import Set
from dataclasses import dataclass
from typing import Any

from sqlalchemy import or_, select

from core.changes import REMOVED
from storage import removed_pages
from storage.collection_results import RESULT_OVERHEAD
from storage.db import Database
from storage.models import CollectionResult


@dataclass(frozen=True)
class Position:
    """Where a list of changes goes on: after result ``seq``, or (``removed``) after removed
    page ``seq``."""

    removed: bool = False
    seq: int = 0

    def text(self) -> str:
        return f"{'x' if self.removed else 'r'}{self.seq}"

    @classmethod
    def parse(cls, text: str) -> Position | None:
        """The position :meth:`text` wrote, or None for anything else."""
        phase, number = text[:1], text[1:]
        if phase not in ("r", "x") or not number.isascii() or not number.isdigit():
            return None
        return cls(phase == "x", int(number))


def _status_is(statuses: Set[str]) -> Any:
    """Results whose stored ``change`` (JSON written by ``storage.collection_store``, its
    status first: ``core.changes.Change.as_dict``) has one of ``statuses``."""
    return or_(*(CollectionResult.change.startswith(json.dumps({"status": status})[:-1],
                                                    autoescape=True)
                 for status in sorted(statuses)))


def page(db: Database, collection_id: str, *, statuses: Set[str], final: bool,
         after: Position = Position(), limit: int = 100, max_bytes: int | None = None
         ) -> tuple[list[dict[str, Any]], Position | None]:
    """The changes of ``statuses`` after ``after``: at most ``limit``, and past the first no
    more than about ``max_bytes``; and the position to continue from, None once nothing can
    follow (``final``: the collection was final before this read, so every result and
    removed page is stored)."""
    entries: list[dict[str, Any]] = []
    position = after
    if not after.removed:
        wanted = set(statuses) - {REMOVED}
        found, more = (_results(db, collection_id, wanted, after.seq, limit, max_bytes)
                       if wanted else ([], False))
        entries = [entry for _, entry in found]
        position = Position(False, found[-1][0] if found else after.seq)
        if more or not final:
            return entries, position
        position = Position(True, 0)
    if REMOVED not in statuses:
        return entries, None
    if len(entries) == limit:  # the removed pages follow, if there are any
        return entries, position
    rows, following = removed_pages.page(db, collection_id, after=position.seq,
                                         limit=limit - len(entries))
    entries += ({"url": row.url, "status": REMOVED, "fetched_at": None,
                 "previous_fetched_at": row.previous_fetched_at, "diff": None} for row in rows)
    return entries, None if following is None else Position(True, following)


def _results(db: Database, collection_id: str, statuses: Set[str], after: int, limit: int,
             max_bytes: int | None) -> tuple[list[tuple[int, dict[str, Any]]], bool]:
    """Results' changes after position ``after`` (each with its ``seq``), and whether more
    follow; rows are read as they are needed."""
    query = (select(CollectionResult.seq, CollectionResult.url, CollectionResult.fetched_at,
                    CollectionResult.change)
             .where(CollectionResult.collection_id == collection_id,
                    CollectionResult.seq > after, _status_is(statuses))
             .order_by(CollectionResult.seq).limit(limit + 1))
    entries: list[tuple[int, dict[str, Any]]] = []
    used = 0
    with db.connection() as connection:
        result = connection.execution_options(yield_per=16).execute(query)
        try:
            for row in result:
                used += RESULT_OVERHEAD + len(row.url) + len(row.change)
                if len(entries) == limit or (entries and max_bytes is not None
                                             and used > max_bytes):
                    return entries, True
                change = json.loads(row.change)
                entries.append((row.seq, {
                    "url": row.url, "status": change["status"], "fetched_at": row.fetched_at,
                    "previous_fetched_at": change["previous_fetched_at"],
                    "diff": change["diff"]}))
        finally:
            result.close()
    return entries, False
