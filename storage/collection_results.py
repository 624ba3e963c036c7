"""A collection's stored page results as they are read back: a page of them at a time, in
completion order, and each as the API answers it (``GET /collections/{id}/results``, the
export, batch code). Storing them, charged in the same transaction, is
:func:`storage.collection_store.store`'s."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from sqlalchemy import select, update

from storage.db import Database
from storage.models import CollectionResult


def page_key(canonical_url: str) -> str:
    """The key of one page in a collection: the SHA-1 of its canonical URL (fixed length,
    so it can be unique-indexed whatever the URL's length)."""
    return hashlib.sha1(canonical_url.encode(), usedforsecurity=False).hexdigest()


#: Bytes of a result's answer besides its stored texts (keys, status, dates, punctuation).
RESULT_OVERHEAD = 256


def size(row: CollectionResult) -> int:
    """About how many bytes ``row`` takes in an answer: its stored JSON texts and URLs."""
    return (RESULT_OVERHEAD + len(row.url) + len(row.final_url or "") + len(row.error or "")
            + len(row.data or ""))


def page(db: Database, collection_id: str, *, after: int = 0, limit: int = 100,
         status: str | None = None, max_bytes: int | None = None,
         ) -> tuple[list[CollectionResult], int | None]:
    """Results in completion order after position ``after``: at most ``limit`` of them and,
    past the first, no more than ``max_bytes`` (:func:`size`); and the position to continue
    from (None at the end of what is stored now). Rows are read as they are needed, so a
    page of large results never holds more than one beyond its own in memory."""
    query = select(CollectionResult).where(CollectionResult.collection_id == collection_id,
                                           CollectionResult.seq > after)
    if status is not None:
        query = query.where(CollectionResult.status == status)
    query = query.order_by(CollectionResult.seq).limit(limit + 1)
    rows: list[CollectionResult] = []
    used, more = 0, False
    with db.session() as session:
        result = session.scalars(query.execution_options(yield_per=16))
        try:
            for row in result:
                used += size(row)
                if len(rows) == limit or (rows and max_bytes is not None and used > max_bytes):
                    more = True
                    break
                rows.append(row)
        finally:
            result.close()  # a server-side cursor left mid-way
    return rows, (rows[-1].seq if more and rows else None)


def body(row: CollectionResult) -> dict[str, Any]:
    """A stored result as the API answers it (docs/api.md, Results): the error's code and message
    (its details are the crawler's), ``data`` as the operation's body fields, and the page's
    ``change`` (null but in a collection with change tracking)."""
    error = json.loads(row.error) if row.error else None
    return {"url": row.url, "final_url": row.final_url, "status": row.status,
            "status_code": row.status_code, "fetched_at": row.fetched_at,
            "error": {"error": error["error"], "message": error["message"]} if error else None,
            "data": json.loads(row.data) if row.data else None,
            "change": json.loads(row.change) if row.change else None}


def data_of(row: CollectionResult) -> Any:
    """A stored result's ``data``, parsed (None when it has none)."""
    return json.loads(row.data) if row.data else None


def rewrite_data(db: Database, collection_id: str, datas: dict[int, Any]) -> None:
    """Replace the ``data`` of the results at positions ``datas`` (seq → data), in one
    transaction: a crawl's stored pages cleaned once it knows their repeated blocks."""
    with db.session() as session:
        for seq, data in datas.items():
            session.execute(
                update(CollectionResult)
                .where(CollectionResult.collection_id == collection_id,
                       CollectionResult.seq == seq)
                .values(data=json.dumps(data) if data is not None else None))
