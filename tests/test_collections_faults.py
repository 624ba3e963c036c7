"""Collections survive their workers: a worker killed mid-crawl (``kill -9``) loses no page and
charges none twice, and a collection whose every worker died is resumed by the next one."""

from __future__ import annotations

import signal
import time
import uuid
from collections.abc import Iterator

import pytest
from redis import Redis
from rq import Worker
from rq.job import Job
from rq.registry import StartedJobRegistry

from collecting import control
from collecting.frontier import Frontier
from core.config import Config
from storage import accounts, collections, ledger
from storage.db import Database
from tests.conftest import _redis_db, new_customer
from tests.support.collection_stack import Stack, all_results, wait_final
from tests.support.waits import wait_until
from tests.test_frontier import DB_OFFSET
from worker import queues
from worker.maintenance import look_after_collections


@pytest.fixture
def stack(tmp_path_factory, sqlite_url, site) -> Iterator[Stack]:
    stack = Stack(tmp_path_factory.mktemp("collection-faults"), sqlite_url, site)
    yield stack
    stack.close()


@pytest.fixture
def any_stack(tmp_path_factory, database_url, site) -> Iterator[Stack]:
    """The stack on SQLite, then on PostgreSQL (when TEST_DATABASE_URL is set)."""
    stack = Stack(tmp_path_factory.mktemp("collection-faults"), database_url, site)
    yield stack
    stack.close()


def _progress(who, collection_id: str) -> dict:
    return who.get(f"/collections/{collection_id}").get_json()["progress"]


def _assert_each_page_once_and_billed_once(who, created: dict, urls: list[str]) -> None:
    final = wait_final(who, created["id"], timeout=120)
    assert final["status"] == "completed", final
    results = all_results(who, created["id"], limit=7)
    assert sorted(r["url"] for r in results) == sorted(urls)  # every page, exactly once
    succeeded = sum(r["status"] == "succeeded" for r in results)
    assert succeeded == len(urls) == final["progress"]["succeeded"]
    assert final["credits_used"] == succeeded == 200 - who.balance()
    assert sum(a["credits"] for a in who.activity()) == -who.balance()


def _kill_a_slice_worker(stack: Stack) -> None:
    """``kill -9`` a worker process that runs one of the collection's slices."""
    connection = Redis.from_url(stack.redis_url)
    registry = StartedJobRegistry(queues.COLLECTIONS, connection=connection)
    for job_id in registry.get_job_ids():
        job = Job.fetch(job_id, connection=connection, serializer=queues.SERIALIZER)
        worker = Worker.find_by_key(Worker.redis_worker_namespace_prefix + job.worker_name,
                                    connection=connection)
        if worker is not None and worker.pid:
            proc = next(p for p in stack.procs if p.pid == worker.pid)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
            stack.procs.remove(proc)
            return
    raise AssertionError("no slice is running")


def test_a_worker_killed_mid_crawl_loses_no_page(any_stack, site):
    stack = any_stack
    who = new_customer(stack.app, credits=200, plan="standard")
    tag = uuid.uuid4().hex[:8]  # this run's pages (the test runs once per database)
    urls = [f"{site}/slow/kill{tag}?ms=300&n={n}" for n in range(30)]
    created = who.post("/collections", {"mode": "batch", "urls": urls}).get_json()
    assert "id" in created, created
    wait_until(lambda: _progress(who, created["id"])["done"] >= 8, "some pages to be done",
               timeout=60, pause=0.25)
    leased = Frontier(Redis.from_url(stack.redis_url), created["id"]).state().leased
    assert leased  # pages are leased (in flight or waiting for the host) as the worker dies
    _kill_a_slice_worker(stack)
    # its pages come back when their leases expire; the cron's watchdog would start a new
    # slice if the killed worker held them all
    look_after_collections(stack.config, Redis.from_url(stack.redis_url))
    _assert_each_page_once_and_billed_once(who, created, urls)


def test_a_collection_whose_workers_all_died_is_resumed(stack, site):
    who = new_customer(stack.app, credits=200, plan="standard")
    urls = [f"{site}/slow/resume{n}?ms=300" for n in range(30)]
    created = who.post("/collections", {"mode": "batch", "urls": urls}).get_json()
    wait_until(lambda: _progress(who, created["id"])["done"] >= 4, "some pages to be done",
               timeout=60, pause=0.25)
    for proc in stack.procs:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    stack.procs.clear()
    redis = Redis.from_url(stack.redis_url)
    wait_until(lambda: look_after_collections(stack.config, redis)["resumed"] >= 1
               or created["id"] not in collections.running(stack.app.extensions["webdata.db"]),
               "the watchdog to see the collection has no live slice", timeout=60, pause=0.5)
    stack.start_workers(1)
    _assert_each_page_once_and_billed_once(who, created, urls)


def test_a_collection_no_worker_takes_fails_after_the_stall_time(sqlite_url, redis_url):
    """Its slice waits in the queue (no worker on ``collections``): resumed, no; failed with
    a stop_reason once it made no progress for COLLECTION_STALL_SECONDS."""
    redis_db = _redis_db(redis_url, DB_OFFSET)
    config = Config.of(database_url=sqlite_url, redis_url=redis_db, collection_stall_seconds=1)
    db = Database(sqlite_url)
    who = account_with_credits(db)
    row = collections.create(db, account_id=who, mode="batch", extract="page",
                             spec={"urls": ["http://a.test/"]}, max_running=5)
    redis = Redis.from_url(redis_db)
    control.enqueue_slice(redis, row.id, config)
    slices = Frontier(redis, row.id).slices()
    look_after_collections(config, redis)  # (it looks after every live collection)
    assert Frontier(redis, row.id).slices() == slices  # its slice waits: not resumed twice
    assert collections.get(db, row.id).status == "queued"
    time.sleep(1.2)
    look_after_collections(config, redis)
    final = collections.get(db, row.id)
    assert (final.status, final.stop_reason) == ("failed", "stalled")


def account_with_credits(db: Database) -> str:
    with db.write() as session:
        account_id = accounts.create_account(session, f"stall-{uuid.uuid4().hex[:8]}").id
    ledger.grant(db, account_id, 5, f"grant:{uuid.uuid4().hex}")
    return account_id
