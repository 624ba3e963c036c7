"""A Redis stopped and started again with its data (an append-only file), as a deployment's
Redis restarts: the cron scheduler goes on by itself, a worker records the end of a job it
could not record while Redis was away, and the collections' watchdog gives a collection back
the slices it lost (found by tests/test_multihost.py: before, a collection whose slices all
died with Redis stayed "running" for ever).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis
from rq.job import Job

from collecting import control
from collecting.frontier import Frontier
from core.config import Config
from core.processes import redis_binary
from launcher.embedded import free_port
from storage import collections
from storage.db import Database, migrate
from tests.conftest import ROOT
from tests.support.waits import wait_until
from worker import queues, rq_state

pytestmark = pytest.mark.stack


class Restartable:
    """A redis-server keeping an append-only file in ``directory``, on one port."""

    def __init__(self, directory: Path):
        self.directory, self.port = directory, free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [redis_binary(), "--port", str(self.port), "--bind", "127.0.0.1", "--dir",
             str(self.directory), "--appendonly", "yes", "--save", ""],
            stdout=subprocess.DEVNULL)
        wait_until(lambda: _pings(self.url), "Redis to start", timeout=10, pause=0.05)

    def stop(self) -> None:
        assert self.proc is not None
        self.proc.terminate()  # SHUTDOWN: the append-only file is synced
        self.proc.wait(timeout=10)


def _pings(url: str) -> bool:
    try:
        return bool(Redis.from_url(url, socket_timeout=1).ping())
    except OSError:
        return False
    except Exception:
        return False


@pytest.fixture
def redis_server(tmp_path) -> Iterator[Restartable]:
    server = Restartable(tmp_path)
    yield server
    if server.proc is not None and server.proc.poll() is None:
        server.stop()


def _spawn(module: list[str], redis_url: str, log: Path, **env: str) -> subprocess.Popen:
    with log.open("ab") as out:
        return subprocess.Popen([sys.executable, "-m", *module], cwd=ROOT, stdout=out,
                                stderr=subprocess.STDOUT,
                                env={**os.environ, "REDIS_URL": redis_url, "REDIS_TIMEOUT": "1",
                                     "LOG_LEVEL": "INFO", **env})


def test_the_cron_scheduler_goes_on_after_a_redis_restart(redis_server, tmp_path):
    log = tmp_path / "cron.log"
    cron = _spawn(["worker.cron"], redis_server.url, log, SWEEP_INTERVAL="1")
    try:
        redis = Redis.from_url(redis_server.url)
        wait_until(lambda: rq_state.live_cron_schedulers(redis) == 1, "the scheduler",
                   timeout=30, proc=cron)
        redis_server.stop()
        wait_until(lambda: "Redis unreachable" in log.read_text(), "the scheduler to see it",
                   timeout=15, proc=cron)
        redis_server.start()
        redis = Redis.from_url(redis_server.url)
        redis.delete(queues.queue(queues.MAINTENANCE, redis).key)
        wait_until(lambda: queues.queue(queues.MAINTENANCE, redis).count > 0,
                   "a sweep enqueued after the restart", timeout=30, proc=cron)
        assert rq_state.live_cron_schedulers(redis) >= 1
    finally:
        cron.terminate()
        assert cron.wait(timeout=15) == 0, log.read_text()


def test_a_worker_records_the_end_of_a_job_redis_missed(redis_server, tmp_path):
    """The job ends while Redis is away: once it is back the job is FAILED, not "started" on
    a live worker for ever (what kept the watchdog from resuming collections)."""
    log = tmp_path / "worker.log"
    worker = _spawn(["worker", "interactive"], redis_server.url, log)
    try:
        redis = Redis.from_url(redis_server.url)
        wait_until(lambda: rq_state.queue_workers(redis, [queues.INTERACTIVE])[
            queues.INTERACTIVE], "the worker", timeout=60, proc=worker)
        job = queues.queue(queues.INTERACTIVE, redis).enqueue("time.sleep", 3)
        wait_until(lambda: job.get_status(refresh=True) == "started", "the job to start",
                   timeout=15, proc=worker)
        redis_server.stop()
        wait_until(lambda: "could not record the end of job" in log.read_text(),
                   "the job to end while Redis is away", timeout=20, proc=worker)
        redis_server.start()
        redis = Redis.from_url(redis_server.url)
        wait_until(lambda: Job.fetch(job.id, connection=redis,
                                     serializer=queues.SERIALIZER).get_status() == "failed",
                   "the job recorded as failed", timeout=30, proc=worker)
    finally:
        worker.terminate()
        worker.wait(timeout=30)


@pytest.fixture
def running(tmp_path, redis_server):
    """A running batch of its own, on a database of its own (the watchdog looks at every
    collection): (database, redis, configuration, the collection's frontier)."""
    from tests.test_collections_faults import account_with_credits

    sqlite_url = f"sqlite:///{tmp_path / 'watchdog.db'}"
    migrate(sqlite_url)
    config = Config.of(database_url=sqlite_url, redis_url=redis_server.url)
    db = Database(sqlite_url)
    row = collections.create(db, account_id=account_with_credits(db), mode="batch",
                             extract="page", spec={"urls": ["http://a.test/"]}, max_running=5)
    redis = Redis.from_url(redis_server.url)
    return db, redis, config, Frontier(redis, row.id), row.id


def test_the_watchdog_gives_a_collection_back_the_slices_it_lost(running):
    """A collection running 3 slices at once of which 1 is left gets 2 new ones."""
    db, redis, config, frontier, row_id = running
    frontier.set_width(3)
    frontier.add_slice("a-slice-whose-job-is-gone")
    kept = control.enqueue_slice(redis, row_id, config)
    assert control.look_after(db, redis, config)["resumed"] == 1
    slices = frontier.slices()
    assert len(slices) == 3 and kept.id in slices and "a-slice-whose-job-is-gone" not in slices
    assert control.look_after(db, redis, config)["resumed"] == 0  # queued ones are alive
    assert frontier.slices() == slices


def test_a_slice_handed_over_while_the_watchdog_looks_is_not_doubled(running, monkeypatch):
    """The slice ends between the watchdog's two looks: its successor, enqueued before its
    end, counts as alive, and no extra slice is started."""
    db, redis, config, frontier, row_id = running
    frontier.add_slice("ending")
    handed: list[str] = []

    def ended_meanwhile(_redis: Redis, job_id: str) -> bool:
        handed.append(control.enqueue_slice(redis, row_id, config).id)  # its successor
        frontier.drop_slice(job_id)
        return False  # finished by the time its status is read

    monkeypatch.setattr(control, "_slice_alive", ended_meanwhile)
    assert control.look_after(db, redis, config)["resumed"] == 0
    assert frontier.slices() == set(handed)


def test_a_slice_the_watchdog_replaced_starts_no_successor(running):
    """Held up so long it looked dead, the slice was replaced: at its end it hands over to
    nobody (else each such slice would add a chain of slices for the collection's life)."""
    db, redis, config, frontier, row_id = running
    replacement = control.enqueue_slice(redis, row_id, config)
    control.end_slice(db, redis, frontier, row_id, config, stopped=None, repeats=None,
                      webhook=False, job_id="the-replaced-one")
    assert frontier.slices() == {replacement.id}
    control.end_slice(db, redis, frontier, row_id, config, stopped=None, repeats=None,
                      webhook=False, job_id=replacement.id)
    assert len(frontier.slices()) == 2  # a live slice's successor (it drops itself after)
