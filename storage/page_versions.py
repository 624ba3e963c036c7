"""The pages an account tracks for changes, by tag (docs/api.md, Change tracking): the latest
version of each, which a collection's slice reads before it stores a batch (to compare) and
which the batch's transaction replaces (:func:`storage.collection_store.store`), with the
collection's counts by change."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import insert, select, update
from sqlalchemy.orm import Session

from core.changes import STATUSES
from storage.db import Database
from storage.models import Collection, utcnow
from storage.page_cache import pack_text, unpack_text
from storage.page_models import PageVersion


@dataclass(frozen=True)
class Previous:
    """A page's version as the last collection of its tag stored it."""

    digest: str
    content: str
    fetched_at: str | None


@dataclass(frozen=True)
class Version:
    """A page's new version, and how it compares with the previous one (``change``: a
    status of :data:`core.changes.STATUSES`)."""

    page_key: str
    url: str
    fetched_at: str | None
    digest: str
    content: str
    change: str


def previous(db: Database, account_id: str, tag: str, page_keys: Sequence[str]
             ) -> dict[str, Previous]:
    """The latest versions of ``page_keys`` under ``tag``, by page key (one query)."""
    if not page_keys:
        return {}
    with db.connection() as connection:
        rows = connection.execute(select(
            PageVersion.page_key, PageVersion.digest, PageVersion.content,
            PageVersion.fetched_at).where(
            PageVersion.account_id == account_id, PageVersion.tag == tag,
            PageVersion.page_key.in_(list(page_keys)))).all()
    return {row.page_key: Previous(row.digest, unpack_text(row.content), row.fetched_at)
            for row in rows}


def write(session: Session, collection_id: str, account_id: str, tag: str,
          counted: str | None, versions: Sequence[Version]) -> None:
    """In the transaction that stores their results (the collection's row locked): replace
    the pages' versions and count their changes on the collection, whose counts were
    ``counted`` when locked."""
    if not versions:
        return
    known = set(session.scalars(select(PageVersion.page_key).where(
        PageVersion.account_id == account_id, PageVersion.tag == tag,
        PageVersion.page_key.in_([version.page_key for version in versions]))))
    fresh = [version for version in versions if version.page_key not in known]
    for version in versions:
        if version.page_key in known:
            session.execute(update(PageVersion).where(
                PageVersion.account_id == account_id, PageVersion.tag == tag,
                PageVersion.page_key == version.page_key).values(**_columns(version),
                                                                 collection_id=collection_id))
    if fresh:
        session.execute(insert(PageVersion), [
            {"account_id": account_id, "tag": tag, "page_key": version.page_key,
             "collection_id": collection_id, **_columns(version)} for version in fresh])
    numbers = json.loads(counted) if counted else {}
    for version in versions:
        numbers[version.change] = numbers.get(version.change, 0) + 1
    session.execute(update(Collection).where(Collection.id == collection_id)
                    .values(changes=json.dumps(numbers, sort_keys=True)))


def _columns(version: Version) -> dict[str, object]:
    return {"url": version.url, "fetched_at": version.fetched_at, "digest": version.digest,
            "content": pack_text(version.content), "written_at": utcnow()}


def counts(row: Collection) -> dict[str, int] | None:
    """A collection's pages by change, every status present; None without change tracking
    (its counts are set, empty, when it is created with it; ``removed`` when it completes:
    :mod:`storage.removed_pages`)."""
    return counted(row.changes)


def counted(changes: str | None) -> dict[str, int] | None:
    """Stored counts by change (a collection's, a monitor run's) with every status present;
    None for none."""
    if changes is None:
        return None
    stored = json.loads(changes)
    return {status: int(stored.get(status, 0)) for status in STATUSES}
