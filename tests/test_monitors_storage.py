"""Monitors in the database, on SQLite and PostgreSQL: the plan's cap under concurrent
creations, one taker per due slot, a run created with its collection and ended with it, the
last runs of many monitors in one read, and the runs kept bounded."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest

from storage import accounts, collections, ledger, monitors
from storage.db import Database
from storage.models import CollectionStatus, utcnow
from storage.monitor_models import RunStatus

RETENTION = timedelta(days=7)


@pytest.fixture
def db(database_url) -> Database:
    return Database(database_url)


def account(db: Database, plan: str = "free") -> str:
    with db.session() as session:
        row = accounts.create_account(session, f"mon-{uuid.uuid4().hex[:10]}", plan)
        account_id = row.id
    ledger.grant(db, account_id, 10, f"grant:{uuid.uuid4().hex}")
    return account_id


def monitor(db: Database, account_id: str) -> monitors.Monitor:
    return monitors.create(db, account_id=account_id, name=None,
                           collection={"mode": "batch", "urls": ["http://a.test/"]},
                           schedule={"every": 300}, webhook_url=None, notify="changes")


def test_concurrent_creations_never_pass_the_plan(db):
    owner = account(db)  # free: 2 monitors

    def one(_: int) -> bool:
        try:
            monitor(db, owner)
            return True
        except monitors.MonitorLimit:
            return False

    with ThreadPoolExecutor(6) as pool:
        made = list(pool.map(one, range(6)))
    assert made.count(True) == 2 and len(monitors.of_account(db, owner)) == 2


def test_a_due_slot_has_one_taker_and_a_run_ends_with_its_collection(db):
    owner = account(db, plan="standard")
    row = monitor(db, owner)
    now = utcnow()
    [due] = [m for m in monitors.due(db, now) if m.id == row.id]
    later = now + timedelta(seconds=300)
    with ThreadPoolExecutor(4) as pool:
        taken = list(pool.map(lambda _: monitors.claim(db, due, later, now), range(4)))
    assert taken.count(True) == 1
    assert row.id not in {m.id for m in monitors.due(db, now)}
    collection = collections.create(db, account_id=owner, mode="batch", extract="page",
                                    spec={"urls": ["http://a.test/"], "change_tracking": {
                                        "tag": row.id}},
                                    max_running=5, run=(row.id, due.next_run_at))
    assert monitors.live_run(db, row.id) == collection.id
    [run] = monitors.latest_runs(db, [row.id], 5)[row.id]
    assert (run.status, run.collection_id) == (RunStatus.RUNNING, collection.id)
    assert collections.finish(db, collection.id, CollectionStatus.COMPLETED,
                              retention=RETENTION)
    [run] = monitors.latest_runs(db, [row.id], 5)[row.id]
    assert run.status == "completed" and run.finished_at is not None
    assert monitors.run_body(run)["changes"] == {"new": 0, "same": 0, "changed": 0,
                                                 "removed": 0}
    assert monitors.live_run(db, row.id) is None


def test_runs_are_read_per_monitor_and_kept_bounded(db):
    owner = account(db, plan="standard")
    first, second = monitor(db, owner), monitor(db, owner)
    due = utcnow()
    for n in range(monitors.KEPT_RUNS + 5):
        monitors.skip(db, first.id, due, "overlap", f"slot {n}")
    monitors.skip(db, second.id, due, "insufficient_credits", "no credit", pause=True)
    runs = monitors.latest_runs(db, [first.id, second.id], 3)
    assert [run.message for run in runs[first.id]] == [
        f"slot {n}" for n in range(monitors.KEPT_RUNS + 4, monitors.KEPT_RUNS + 1, -1)]
    assert len(monitors.latest_runs(db, [first.id], 1000)[first.id]) == monitors.KEPT_RUNS
    assert [run.reason for run in runs[second.id]] == ["insufficient_credits"]
    paused = monitors.get(db, second.id, owner)
    assert (paused.status, paused.paused_reason) == ("paused", "insufficient_credits")
    assert monitors.delete_monitor(db, first.id, owner)
    assert monitors.latest_runs(db, [first.id], 5)[first.id] == []
    assert not monitors.delete_monitor(db, second.id, account(db))  # another account's
