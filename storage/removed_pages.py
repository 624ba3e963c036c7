"""The pages a collection with change tracking did not find again (docs/api.md, Change
tracking): decided once, in the transaction of its completion (:func:`storage.collections.
finish`), so its webhook event counts them; read back by ``GET /collections/{id}/changes`` and
the export's ``include=removed``.

**Removed** are the versions under the collection's (account, tag) last written by an earlier
collection (created before it, or whose row is gone) whose page it did not store successfully,
but for two things that say nothing about the page being gone:

- a page whose result here failed otherwise than by a 404 or 410 of the target (a timeout, a
  500, robots.txt…) keeps its version: it may well be there still, and so does a page a crawl
  skipped because robots.txt or the source policy refused it (while robots.txt cannot be read
  every page is refused: the site is not gone for that);
- a crawl cut by ``max_pages`` (it recorded a ``limit`` skip) saw only part of the site, and
  a crawl whose start page failed (the site down, a 500) saw next to nothing of it: either
  removes nothing, and every version stays.

The removed versions are deleted (the tag then holds the pages of its last completed run: a
page that comes back is ``new``) and listed in ``collection_removed``, set-based: a tag may
hold 100,000 pages.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import (
    ColumnElement,
    and_,
    delete,
    exists,
    func,
    insert,
    literal,
    not_,
    or_,
    select,
)
from sqlalchemy.orm import Session, aliased

from core.canonical import canonical_url
from core.contract import ErrorCode, PageStatus, SkipReason
from storage import collection_skips
from storage.collection_results import page_key
from storage.db import Database
from storage.models import Collection, CollectionResult, CollectionSkip
from storage.page_models import PageVersion, RemovedPage

#: Target statuses that say a page is gone.
GONE_STATUSES = (404, 410)
#: The skips that say nothing of a page being gone: refused, not missing.
REFUSALS = (SkipReason.ROBOTS, SkipReason.POLICY)
#: How a stored ``target_http_error`` starts (``storage.collection_store`` writes errors with
#: ``json.dumps``, their code first).
_TARGET_ERROR = json.dumps({"error": ErrorCode.TARGET_HTTP_ERROR})[:-1]
#: The columns of :class:`RemovedPage` a removal fills, in order.
_FILLED = ("collection_id", "seq", "url", "page_key", "previous_fetched_at")


def tag_of(row: Collection) -> str | None:
    """The change tracking tag of a collection (None: it tracks nothing)."""
    if row.changes is None:
        return None
    return (json.loads(row.spec).get("change_tracking") or {}).get("tag")


def _removable(row: Collection, tag: str) -> ColumnElement[bool]:
    """Which versions of ``tag`` the completion of ``row`` removes (see the module)."""
    later = aliased(Collection)
    started = select(Collection.created_at).where(Collection.id == row.id).scalar_subquery()
    not_earlier = select(later.id).where(later.account_id == row.account_id,
                                         later.created_at >= started)
    result = CollectionResult
    kept = exists().where(
        result.collection_id == row.id, result.page_key == PageVersion.page_key,
        or_(result.status == PageStatus.SUCCEEDED,
            func.coalesce(result.status_code, 0).not_in(GONE_STATUSES),
            not_(func.coalesce(result.error, "").startswith(_TARGET_ERROR, autoescape=True))))
    refused = exists().where(
        CollectionSkip.collection_id == row.id, CollectionSkip.page_key == PageVersion.page_key,
        CollectionSkip.reason.in_(REFUSALS))
    return and_(PageVersion.account_id == row.account_id, PageVersion.tag == tag,
                PageVersion.collection_id.not_in(not_earlier), ~kept, ~refused)


def record(session: Session, row: Collection) -> int:
    """In the transaction of ``row``'s completion (its status just set, its row locked):
    delete the versions it removes and list them, numbered in URL order; how many."""
    tag = tag_of(row)
    if tag is None or collection_skips.counts(row)["limit"] or not _saw_the_site(session, row):
        return 0
    removable = _removable(row, tag)
    if session.get_bind().dialect.name == "postgresql":
        # one statement: exactly the rows deleted are listed, whatever another collection of
        # the tag writes meanwhile (READ COMMITTED would let two statements see two states)
        gone = (delete(PageVersion).where(removable)
                .returning(PageVersion.url, PageVersion.page_key, PageVersion.fetched_at)
                .cte("gone"))
        listed = insert(RemovedPage).from_select(_FILLED, _numbered(row.id, gone.c)) \
            .add_cte(gone)
        return session.execute(listed).rowcount
    # SQLite: the transaction holds the database's write lock (its first statement wrote)
    chosen = select(PageVersion.url, PageVersion.page_key, PageVersion.fetched_at) \
        .where(removable).subquery()
    count = session.execute(insert(RemovedPage).from_select(
        _FILLED, _numbered(row.id, chosen.c))).rowcount
    session.execute(delete(PageVersion).where(removable))
    return count


def _saw_the_site(session: Session, row: Collection) -> bool:
    """Whether ``row`` saw its whole site: a batch did (its URLs are its site); a crawl did
    when its start page succeeded."""
    if row.mode != "crawl":
        return True
    start = page_key(canonical_url(json.loads(row.spec)["url"]))
    return session.scalar(select(CollectionResult.status).where(
        CollectionResult.collection_id == row.id,
        CollectionResult.page_key == start)) == PageStatus.SUCCEEDED


def _numbered(collection_id: str, columns: Any) -> Any:
    """The rows to insert from ``columns`` (url, page_key, fetched_at): numbered by URL."""
    return select(literal(collection_id), func.row_number().over(
        order_by=(columns.url, columns.page_key)), columns.url, columns.page_key,
        columns.fetched_at)


def page(db: Database, collection_id: str, *, after: int = 0, limit: int = 100
         ) -> tuple[list[RemovedPage], int | None]:
    """Removed pages after position ``after``: at most ``limit``, and the position to
    continue from (None at the end)."""
    with db.session() as session:
        rows = list(session.scalars(
            select(RemovedPage).where(RemovedPage.collection_id == collection_id,
                                      RemovedPage.seq > after)
            .order_by(RemovedPage.seq).limit(limit + 1)))
    more = len(rows) > limit
    rows = rows[:limit]
    return rows, (rows[-1].seq if more and rows else None)
