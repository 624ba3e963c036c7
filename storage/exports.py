"""A collection's results read in one pass, for ``GET /collections/{id}/export``.

An export may be any size, so it never holds more than one batch of rows: the query runs on a
server-side cursor (PostgreSQL; SQLite's cursor reads as it goes anyway) and hands back plain
tuples of columns through SQLAlchemy Core, not ORM objects, whose identity map and per-object
bookkeeping would cost more than the export itself. ``error`` and ``data`` come back as the JSON
text they are stored as, so a serialiser can splice ``data`` into its output without decoding
and encoding it again.

The rows are read in one transaction: one consistent snapshot, also while the collection runs
(what is stored at the start is exported, nothing half-written).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from sqlalchemy import select

from storage.db import Database
from storage.models import CollectionResult

#: Rows fetched from the database at a time: one serialised chunk each (a few hundred KB).
BATCH = 200


class ExportRow(NamedTuple):
    """One stored result, columns as stored (``error`` and ``data``: JSON text or None)."""

    url: str
    final_url: str | None
    status: str
    status_code: int | None
    fetched_at: str | None
    error: str | None
    data: str | None


_COLUMNS = (CollectionResult.url, CollectionResult.final_url, CollectionResult.status,
            CollectionResult.status_code, CollectionResult.fetched_at, CollectionResult.error,
            CollectionResult.data)


def stream_results(db: Database, collection_id: str, *, status: str | None = None,
                   batch: int = BATCH) -> Iterator[Sequence[Any]]:
    """The collection's results in completion order, ``batch`` rows at a time (each row an
    :class:`ExportRow`-shaped tuple). The connection is held until the generator is exhausted
    or closed: close it (a streamed response does, also when the client goes away)."""
    query = select(*_COLUMNS).where(CollectionResult.collection_id == collection_id)
    if status is not None:
        query = query.where(CollectionResult.status == status)
    query = query.order_by(CollectionResult.seq)
    with db.engine.connect() as connection:
        streaming = connection.execution_options(stream_results=True, yield_per=batch)
        yield from streaming.execute(query).partitions()
