"""The activity history, newest first, in pages."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Select, select

from storage.db import Database
from storage.models import Activity


@dataclass(frozen=True)
class Filters:
    """What the console's activity table narrows the history to (all optional)."""

    operations: tuple[str, ...] = ()
    status: str | None = None
    #: Rows at or after ``since`` and before ``until`` (UTC).
    since: datetime | None = None
    until: datetime | None = None
    request_id: str | None = None


def page(
    db: Database, account_id: str, *, before: int | None = None, limit: int = 50,
    filters: Filters | None = None,
) -> tuple[list[Activity], int | None]:
    """Up to ``limit`` rows older than row id ``before``; and the id to continue from."""
    query = select(Activity).where(Activity.account_id == account_id)
    if before is not None:
        query = query.where(Activity.id < before)
    if filters is not None:
        query = _narrowed(query, filters)
    with db.session() as session:
        rows = list(session.scalars(query.order_by(Activity.id.desc()).limit(limit + 1)))
    more = len(rows) > limit
    rows = rows[:limit]
    return rows, (rows[-1].id if more and rows else None)


def _narrowed(query: Select, filters: Filters) -> Select:
    if filters.operations:
        query = query.where(Activity.operation.in_(filters.operations))
    if filters.status:
        query = query.where(Activity.status == filters.status)
    if filters.since is not None:
        query = query.where(Activity.at >= filters.since)
    if filters.until is not None:
        query = query.where(Activity.at < filters.until)
    if filters.request_id:
        query = query.where(Activity.request_id == filters.request_id)
    return query
