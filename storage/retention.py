"""Retention: a finished collection's results (and its skipped URLs, its removed pages with
change tracking, its webhook events but its end's) are kept until its ``expires_at`` (finished_at +
``COLLECTION_RETENTION_SECONDS``), then deleted by :func:`purge_expired`, which the workers run
on RQ's cron schedule (``worker.maintenance.purge_expired_collections``).

The collection row, its line of history and its ledger entries stay: the account's history
and money are not the results, and the object keeps answering (``status: "expired"``).

Change tracking's page versions have a retention of their own (:func:`purge_versions`): a
version not written again for ``CHANGE_TRACKING_RETENTION_DAYS`` is deleted by the same sweep.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import delete, select, update

from storage import webhooks
from storage.db import Database
from storage.models import Collection, CollectionResult, CollectionSkip, WebhookEvent, utcnow
from storage.page_models import PageVersion, RemovedPage


def purge_expired(db: Database, *, batch: int = 1000, now: datetime | None = None) -> int:
    """Delete the results (and the skipped URLs, the removed pages) of every collection past
    ``expires_at``, ``batch`` rows per short transaction (a purge of millions of rows never
    holds the database long), then mark each purged; returns how many results were deleted.
    Idempotent: a second run, or one racing this one, finds nothing more to delete."""
    now = now or utcnow()
    deleted = 0
    with db.session() as session:
        due = list(session.scalars(
            select(Collection.id).where(Collection.expires_at <= now,
                                        Collection.purged_at.is_(None))
            .order_by(Collection.expires_at)))
    for collection_id in due:
        deleted += _delete(db, CollectionResult, collection_id, batch)
        _delete(db, CollectionSkip, collection_id, batch)
        _delete(db, RemovedPage, collection_id, batch)
        _delete_events(db, collection_id, batch)
        with db.session() as session:
            session.execute(update(Collection).where(Collection.id == collection_id)
                            .values(purged_at=now))
    return deleted


def _delete(db: Database, table: type[CollectionResult | CollectionSkip | RemovedPage],
            collection_id: str, batch: int) -> int:
    """Delete the collection's rows of ``table``, ``batch`` per transaction; how many."""
    deleted = 0
    while True:
        with db.session() as session:
            ids = select(table.id).where(table.collection_id == collection_id).limit(batch)
            gone = session.execute(delete(table).where(
                table.id.in_(ids.scalar_subquery()))).rowcount
        deleted += gone
        if gone < batch:
            return deleted


def _delete_events(db: Database, collection_id: str, batch: int) -> int:
    """Delete the collection's webhook events but its end's (the object still shows that
    one's delivery): its start's and pages', long final by then (the last retry is 17.5 h
    after an event), ``batch`` per transaction; how many."""
    terminal = webhooks.event_id(collection_id)
    deleted = 0
    while True:
        with db.session() as session:
            ids = (select(WebhookEvent.id).where(WebhookEvent.collection_id == collection_id,
                                                 WebhookEvent.id != terminal).limit(batch))
            gone = session.execute(delete(WebhookEvent).where(
                WebhookEvent.id.in_(ids.scalar_subquery()))).rowcount
        deleted += gone
        if gone < batch:
            return deleted


def purge_versions(db: Database, *, older_than: timedelta, batch: int = 1000,
                   now: datetime | None = None) -> int:
    """Delete the page versions of change tracking last written more than ``older_than``
    ago, ``batch`` rows per short transaction; how many. Idempotent."""
    before = (now or utcnow()) - older_than
    deleted = 0
    while True:
        with db.session() as session:
            ids = select(PageVersion.id).where(PageVersion.written_at < before).limit(batch)
            gone = session.execute(delete(PageVersion).where(
                PageVersion.id.in_(ids.scalar_subquery()))).rowcount
        deleted += gone
        if gone < batch:
            return deleted
