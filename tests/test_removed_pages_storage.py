"""Removed pages in the database, on SQLite and PostgreSQL (storage.removed_pages): what a
completed tracked collection removes, what it keeps (pages that failed for another reason
than being gone, a crawl cut by its limit, a later collection's versions, another account's
or tag's), what a stopped one does (nothing), and that they go with the results."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta

import pytest
from sqlalchemy import func, select, text, update

from core.changes import STATUSES
from storage import (
    collection_changes,
    collection_results,
    collection_skips,
    collection_store,
    collections,
    page_versions,
    removed_pages,
    retention,
)
from storage.collection_changes import Position
from storage.collection_store import PageOutcome
from storage.db import Database, migrate
from storage.models import (
    Collection,
    CollectionResult,
    CollectionStatus,
    WebhookEvent,
    as_utc,
    utcnow,
)
from storage.page_models import PageVersion, RemovedPage
from tests.conftest import account_at_old_revision
from tests.test_collections_storage import account

RETENTION = timedelta(days=7)
TARGET_ERROR = "target_http_error"


@pytest.fixture
def db(database_url) -> Database:
    return Database(database_url)


def tracked(db: Database, owner: str, tag: str, webhook: bool = False) -> str:
    return collections.create(
        db, account_id=owner, mode="batch", extract="page",
        spec={"urls": ["http://a.test/"], "change_tracking": {"tag": tag}}, max_running=50,
        webhook_url="http://hooks.test/" if webhook else None).id


def url(n: int) -> str:
    return f"http://a.test/{n:02d}"


def ok(n: int, text: str = "same") -> tuple[PageOutcome, page_versions.Version]:
    outcome = PageOutcome(key=collection_results.page_key(url(n)), url=url(n),
                          status="succeeded", status_code=200,
                          fetched_at=f"2026-11-0{1 + n % 9}T00:00:00Z", data={"text": text})
    return outcome, page_versions.Version(outcome.key, outcome.url, outcome.fetched_at,
                                          f"digest-{text}", text, "new")


def failed(n: int, code: str, status: int | None) -> PageOutcome:
    return PageOutcome(key=collection_results.page_key(url(n)), url=url(n), status="failed",
                       status_code=status, error={"error": code, "message": "x",
                                                  "details": {"target_status": status}})


def run(db: Database, collection_id: str, tag: str, pages: list[int],
        failures: tuple[PageOutcome, ...] = (), status=CollectionStatus.COMPLETED) -> None:
    stored = [ok(n) for n in pages]
    collection_store.store(db, collection_id, [o for o, _ in stored] + list(failures),
                           versions=[v for _, v in stored], tag=tag)
    assert collections.finish(db, collection_id, status, retention=RETENTION)


def versions(db: Database, owner: str, tag: str) -> set[str]:
    with db.session() as session:
        return set(session.scalars(select(PageVersion.url).where(
            PageVersion.account_id == owner, PageVersion.tag == tag)))


def removed(db: Database, collection_id: str) -> list[tuple[str, str | None]]:
    rows, _ = removed_pages.page(db, collection_id, limit=1000)
    assert [row.seq for row in rows] == list(range(1, len(rows) + 1))
    return [(row.url, row.previous_fetched_at) for row in rows]


def changes(db: Database, collection_id: str) -> dict[str, int]:
    return page_versions.counts(collections.get(db, collection_id))


def test_pages_not_found_again_are_removed_and_the_others_kept(db):
    owner, tag = account(db, 100), uuid.uuid4().hex
    first = tracked(db, owner, tag)
    run(db, first, tag, list(range(1, 8)))
    second = tracked(db, owner, tag)
    run(db, second, tag, [1, 2, 8], failures=(
        failed(3, TARGET_ERROR, 404), failed(4, TARGET_ERROR, 410),  # gone
        failed(5, "timeout", None), failed(6, TARGET_ERROR, 500),  # may be there still
        failed(7, "fetch_failed", 404)))  # a 404 that is no target error: not said gone
    # 9 and 10 were never in the first: a failure of theirs removes nothing
    assert removed(db, second) == [(url(3), "2026-11-04T00:00:00Z"),
                                   (url(4), "2026-11-05T00:00:00Z")]
    assert versions(db, owner, tag) == {url(n) for n in (1, 2, 5, 6, 7, 8)}
    assert changes(db, second)["removed"] == 2
    # a page that comes back is new; the third collection removes what the second kept and
    # it did not store
    third = tracked(db, owner, tag)
    run(db, third, tag, [3, 8])
    assert [u for u, _ in removed(db, third)] == [url(n) for n in (1, 2, 5, 6, 7)]
    assert versions(db, owner, tag) == {url(3), url(8)}


def test_a_crawl_cut_by_its_limit_and_a_stopped_collection_remove_nothing(db):
    owner, tag = account(db, 100), uuid.uuid4().hex
    run(db, tracked(db, owner, tag), tag, [1, 2, 3])
    cut = tracked(db, owner, tag)
    collection_skips.record_left(db, cut, [_Skip(url(9), "limit")])
    run(db, cut, tag, [1])
    assert removed(db, cut) == [] and changes(db, cut)["removed"] == 0
    for status in (CollectionStatus.CANCELLED, CollectionStatus.FAILED):
        stopped = tracked(db, owner, tag)
        run(db, stopped, tag, [2], status=status)
        assert removed(db, stopped) == [] and changes(db, stopped)["removed"] == 0
    assert versions(db, owner, tag) == {url(1), url(2), url(3)}


def test_a_page_refused_by_robots_txt_or_the_policy_keeps_its_version(db):
    """A refusal says nothing of the page being gone (robots.txt unreadable refuses all)."""
    owner, tag = account(db, 100), uuid.uuid4().hex
    run(db, tracked(db, owner, tag), tag, [1, 2, 3, 4])
    refused = tracked(db, owner, tag)
    collection_store.store(db, refused, [], [_Skip(url(2), "robots"), _Skip(url(3), "policy"),
                                             _Skip(url(4), "depth")])
    run(db, refused, tag, [1])
    assert [u for u, _ in removed(db, refused)] == [url(4)]  # out of reach: not found
    assert versions(db, owner, tag) == {url(1), url(2), url(3)}


def test_only_an_earlier_collection_s_versions_of_this_account_and_tag_are_removed(db):
    owner, other, tag = account(db, 100), account(db, 100), uuid.uuid4().hex
    run(db, tracked(db, owner, tag), tag, [1, 2])
    run(db, tracked(db, other, tag), tag, [1, 2])
    run(db, tracked(db, owner, "another tag " + tag), tag + "x", [1, 2])
    now, later = tracked(db, owner, tag), tracked(db, owner, tag)
    with db.session() as session:  # created after: whatever it wrote is newer than ``now``
        session.execute(update(Collection).where(Collection.id == later)
                        .values(created_at=utcnow() + timedelta(seconds=5)))
    collection_store.store(db, later, [ok(3)[0]], versions=[ok(3)[1]], tag=tag)
    with db.session() as session:  # a version whose collection is gone is an earlier one
        session.execute(update(PageVersion).where(
            PageVersion.account_id == owner, PageVersion.tag == tag,
            PageVersion.url == url(2)).values(collection_id="col_gone"))
    run(db, now, tag, [])
    assert [u for u, _ in removed(db, now)] == [url(1), url(2)]
    assert versions(db, owner, tag) == {url(3)}
    assert versions(db, other, tag) == {url(1), url(2)}
    assert versions(db, owner, tag + "x") == {url(1), url(2)}


def test_the_webhook_event_counts_them_and_they_go_with_the_results(db):
    owner, tag = account(db, 100), uuid.uuid4().hex
    run(db, tracked(db, owner, tag), tag, [1, 2, 3])
    second = tracked(db, owner, tag, webhook=True)
    run(db, second, tag, [1])
    with db.session() as session:
        payload = session.scalar(select(WebhookEvent.payload)
                                 .where(WebhookEvent.collection_id == second))
    assert json.loads(payload)["collection"]["progress"]["changes"] == {
        "new": 1, "same": 0, "changed": 0, "removed": 2}
    with db.session() as session:
        session.execute(update(Collection).where(Collection.id == second)
                        .values(expires_at=utcnow() - timedelta(seconds=1)))
    retention.purge_expired(db, batch=1)
    with db.session() as session:
        assert session.scalar(select(func.count()).select_from(RemovedPage).where(
            RemovedPage.collection_id == second)) == 0


class _Skip:
    def __init__(self, address: str, reason: str):
        self.url = self.key = address
        self.reason, self.duplicate_of = reason, None



def listed(db: Database, collection_id: str, statuses: set[str], limit: int,
           final: bool = True) -> tuple[list[tuple[str, str]], list[Position | None]]:
    """Every change listed ``limit`` at a time, and the positions each page ended at."""
    entries, positions, after = [], [], Position()
    for _ in range(100):
        found, after = collection_changes.page(db, collection_id, statuses=statuses,
                                               final=final, after=after, limit=limit)
        entries += [(entry["url"], entry["status"]) for entry in found]
        positions.append(after)
        if after is None or not final:
            return entries, positions
    raise AssertionError("the changes never ended")


def test_the_changes_list_results_then_removed_pages_in_every_page_size(db):
    owner, tag = account(db, 100), uuid.uuid4().hex
    run(db, tracked(db, owner, tag), tag, [1, 2, 3, 4])
    second = tracked(db, owner, tag)
    pages = [ok(1), ok(2, "edited"), ok(5)]
    collection_store.store(db, second, [o for o, _ in pages], versions=[
        page_versions.Version(o.key, o.url, o.fetched_at, v.digest, v.content, change)
        for (o, v), change in zip(pages, ("same", "changed", "new"), strict=True)], tag=tag)
    with db.session() as session:  # as collecting.changes would have said
        for (outcome, _), change in zip(pages, ("same", "changed", "new"), strict=True):
            session.execute(update(CollectionResult).where(
                CollectionResult.collection_id == second,
                CollectionResult.page_key == outcome.key).values(change=json.dumps(
                    {"status": change, "previous_fetched_at": None, "diff": None})))
    running, positions = listed(db, second, set(STATUSES), 100, final=False)
    assert running == [(url(1), "same"), (url(2), "changed"), (url(5), "new")]
    assert positions == [Position(False, 3)]  # while it runs, the results only
    assert collections.finish(db, second, CollectionStatus.COMPLETED, retention=RETENTION)
    every = [*running, (url(3), "removed"), (url(4), "removed")]
    for limit in (1, 2, 3, 5, 100):
        assert listed(db, second, set(STATUSES), limit)[0] == every
    shown = [entry for entry in every if entry[1] != "same"]
    assert listed(db, second, {"new", "changed", "removed"}, 2)[0] == shown
    assert listed(db, second, {"removed"}, 1)[0] == every[3:]
    assert listed(db, second, {"same"}, 1) == ([(url(1), "same")], [None])
    assert Position.parse(Position(True, 12).text()) == Position(True, 12)
    refused = ("", "r", "y1", "r-1", "r1.5", "x\u0661")  # the last: an Arabic-Indic digit
    assert [Position.parse(text) for text in refused] == [None] * len(refused)


def test_versions_not_written_for_the_retention_are_purged(db):
    owner, tag = account(db, 100), uuid.uuid4().hex
    run(db, tracked(db, owner, tag), tag, [1, 2, 3])
    with db.session() as session:  # as if their last collection ran 91 days ago
        session.execute(update(PageVersion).where(
            PageVersion.account_id == owner, PageVersion.tag == tag,
            PageVersion.url.in_([url(1), url(2)])).values(
            written_at=utcnow() - timedelta(days=91)))
    assert retention.purge_versions(db, older_than=timedelta(days=90), batch=1) >= 2
    assert versions(db, owner, tag) == {url(3)}
    assert page_versions.previous(db, owner, tag, [ok(1)[0].key]) == {}  # new again
    run(db, tracked(db, owner, tag), tag, [1, 3])  # rewritten: kept for another 90 days
    assert retention.purge_versions(db, older_than=timedelta(days=90)) == 0
    assert versions(db, owner, tag) == {url(1), url(3)}


def test_the_migration_dates_the_versions_kept_before_it(tmp_path):
    """Versions written before revision 0011 get ``written_at`` = the upgrade's time."""
    address = f"sqlite:///{tmp_path / 'legacy.db'}"
    migrate(address, "0010")
    old = Database(address)
    with old.write() as session:
        owner = account_at_old_revision(session, "legacy", "free")
        session.execute(text(
            "INSERT INTO page_versions (account_id, tag, page_key, url, digest, content, "
            "collection_id) VALUES (:owner, 't', 'k', 'http://a.test/', 'd', X'00', 'col_x')"),
            {"owner": owner})
    before = utcnow()
    migrate(address)
    with old.session() as session:
        written = session.scalar(select(PageVersion.written_at))
    assert as_utc(written) >= before - timedelta(seconds=1)
    old.dispose()
