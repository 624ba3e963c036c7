"""The activity history, newest first, in pages."""

from __future__ import annotations

from sqlalchemy import select

from storage.db import Database
from storage.models import Activity


def page(
    db: Database, account_id: str, *, before: int | None = None, limit: int = 50
) -> tuple[list[Activity], int | None]:
    """Up to ``limit`` rows older than row id ``before``; and the id to continue from."""
    query = select(Activity).where(Activity.account_id == account_id)
    if before is not None:
        query = query.where(Activity.id < before)
    with db.session() as session:
        rows = list(session.scalars(query.order_by(Activity.id.desc()).limit(limit + 1)))
    more = len(rows) > limit
    rows = rows[:limit]
    return rows, (rows[-1].id if more and rows else None)
