"""``python -m worker --processes N --cron``, as ``make run`` starts its workers: N warm workers
forked from one process that imported their code (issue 32, a lighter default stack) and then
became their keeper (``worker.keeper``), each an ordinary worker taking jobs, a dead one
replaced, the cron schedule run by worker 0, and a SIGTERM that stops them all warmly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid

import psutil
import pytest
from redis import Redis
from rq import Worker
from rq.cron_scheduler_registry import get_keys as cron_schedulers

from tests.conftest import ROOT, WORKER_ENV, _redis_db
from tests.support.procs import module_of, value_of
from tests.support.waits import job_results, wait_until
from worker import jobs, queues

pytestmark = pytest.mark.stack  # starts processes (tests/conftest.py)

PATIENCE = 60


@pytest.fixture
def pool(redis_url, sqlite_url, tmp_path):
    """A pool of two workers named ``pool-N`` with the cron, leading a process group of its
    own, on a flushed Redis database; (process, connection)."""
    url = _redis_db(redis_url, 12)
    connection = Redis.from_url(url)
    connection.flushdb()
    env = {**os.environ, **WORKER_ENV, "REDIS_URL": url, "DATABASE_URL": sqlite_url,
           "SWEEP_INTERVAL": "1", "WORKER_METRICS_PORT": "0"}
    with (tmp_path / "pool.log").open("wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "worker", "--processes", "2", "--cron",
                                 "--name", "pool", "maintenance", "interactive"], cwd=ROOT,
                                env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        wait_until(lambda: len(Worker.all(connection=connection)) == 2, "two workers",
                   PATIENCE, proc=proc)
        yield proc, connection
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=PATIENCE)
        connection.flushdb()


def _forks(proc: subprocess.Popen) -> list[psutil.Process]:
    return psutil.Process(proc.pid).children()


def test_the_pools_workers_are_forks_that_each_take_jobs(pool, site):
    proc, connection = pool
    assert len(_forks(proc)) == 2
    queue = queues.queue(queues.INTERACTIVE, connection)
    tag = uuid.uuid4().hex
    enqueued = [queue.enqueue(jobs.scrape, f"{site}/slow/{tag}?ms=1500&n={n}") for n in range(8)]
    assert [result.return_value["status"] for result in job_results(
        enqueued, PATIENCE, proc=proc)] == ["succeeded"] * 8
    for job in enqueued:
        job.refresh()
    assert len({job.worker_name for job in enqueued}) == 2  # both took some


def test_the_pools_parent_becomes_a_keeper_that_holds_none_of_the_workers_code(pool):
    proc, _ = pool
    assert module_of(psutil.Process(proc.pid)) == "worker.keeper"
    code = ("import sys, worker.keeper; print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'sqlalchemy', 'storage', 'scrapy', 'twisted', 'collecting', 'crawler', 'rq', "
            "'redis', 'api'}))")
    loaded = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, check=True)
    assert loaded.stdout.strip() == "[]"


def test_worker_0_runs_the_cron_schedule(pool):
    proc, connection = pool
    wait_until(lambda: cron_schedulers(connection), "the cron scheduler's registration",
               PATIENCE, proc=proc)
    maintenance = queues.queue(queues.MAINTENANCE, connection)
    done = maintenance.finished_job_registry
    # SWEEP_INTERVAL=1: the housekeeping jobs come, and the pool's workers run them.
    wait_until(lambda: done.count >= 2, "housekeeping jobs run", PATIENCE, proc=proc)


def test_a_killed_worker_is_replaced_under_a_name_of_its_own(pool):
    """The dead worker's registration lingers in Redis after a SIGKILL: its replacement,
    ``pool-N.1``, does not collide with it."""
    proc, connection = pool
    killed = _forks(proc)[0]
    killed.send_signal(signal.SIGKILL)
    wait_until(lambda: killed.pid not in {fork.pid for fork in _forks(proc)}
               and len(_forks(proc)) == 2, "a new fork", PATIENCE, proc=proc)
    forks = _forks(proc)
    wait_until(lambda: {fork.pid for fork in forks} <= {
        worker.pid for worker in Worker.all(connection=connection)}, "the new worker",
        PATIENCE, proc=proc)
    names = {worker.name for worker in Worker.all(connection=connection)}
    assert {"pool-0", "pool-1"} < names and names & {"pool-0.1", "pool-1.1"}
    assert proc.poll() is None


def test_worker_0s_replacement_runs_the_cron_schedule_again(pool):
    """Started afresh (``--member 0.1``), worker 0's replacement runs the schedule as the
    first one did: the housekeeping jobs go on being enqueued."""
    proc, connection = pool
    first = next(worker for worker in Worker.all(connection=connection)
                 if worker.name == "pool-0")
    psutil.Process(first.pid).send_signal(signal.SIGKILL)
    wait_until(lambda: "pool-0.1" in {worker.name for worker in Worker.all(
        connection=connection)}, "worker 0's replacement", PATIENCE, proc=proc)
    replacement = psutil.Process(next(worker.pid for worker in Worker.all(
        connection=connection) if worker.name == "pool-0.1"))
    assert value_of(replacement, "--member") == "0.1"
    assert replacement.ppid() == proc.pid
    maintenance = queues.queue(queues.MAINTENANCE, connection)
    seen = set(maintenance.finished_job_registry.get_job_ids())
    # SWEEP_INTERVAL=1: new housekeeping jobs come from the replacement's schedule.
    wait_until(lambda: len(set(maintenance.finished_job_registry.get_job_ids()) - seen) >= 2,
               "housekeeping jobs after the kill", PATIENCE, proc=proc)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_sent_to_the_pools_group_stops_the_workers_warmly(pool, site, signum):
    """A terminal's Ctrl-C or a service manager signals the whole group: each worker still
    gets one stop (warm: its job in flight ends), not the group's and the parent's (cold)."""
    proc, connection = pool
    queue = queues.queue(queues.INTERACTIVE, connection)
    job = queue.enqueue(jobs.scrape, f"{site}/slow/{uuid.uuid4().hex}?ms=2000")
    wait_until(lambda: job.get_status(refresh=True) == "started", "the job to start",
               PATIENCE, proc=proc)
    forks = _forks(proc)
    os.killpg(proc.pid, signum)
    assert proc.wait(timeout=PATIENCE) == 0
    assert job.latest_result().return_value["status"] == "succeeded"
    assert not any(fork.is_running() and fork.status() != psutil.STATUS_ZOMBIE for fork in forks)


def test_a_stop_as_the_pool_starts_is_not_lost(redis_url, sqlite_url):
    """A SIGTERM that comes while the parent forks and becomes the keeper is held until the
    keeper handles it: the pool stops, and leaves no worker behind."""
    env = {**os.environ, **WORKER_ENV, "REDIS_URL": _redis_db(redis_url, 12),
           "DATABASE_URL": sqlite_url, "WORKER_METRICS_PORT": "0"}
    proc = subprocess.Popen([sys.executable, "-m", "worker", "--processes", "2", "--name",
                             f"early-{uuid.uuid4().hex[:8]}", "interactive"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    wait_until(lambda: _forks(proc), "the first fork", PATIENCE, proc=proc)
    forks = _forks(proc)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=PATIENCE) == 0
    assert not any(fork.is_running() and fork.status() != psutil.STATUS_ZOMBIE for fork in forks)


def test_a_burst_pool_exits_once_its_workers_have_emptied_the_queues(redis_url, sqlite_url):
    """``--burst``: each worker stops when the queues are empty, and is not replaced."""
    url = _redis_db(redis_url, 12)
    Redis.from_url(url).flushdb()
    env = {**os.environ, **WORKER_ENV, "REDIS_URL": url, "DATABASE_URL": sqlite_url,
           "WORKER_METRICS_PORT": "0"}
    done = subprocess.run([sys.executable, "-m", "worker", "--processes", "2", "--burst",
                           "interactive"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=PATIENCE)
    assert done.returncode == 0, done.stderr
    assert "replacing it" not in done.stderr


def test_a_pool_whose_workers_cannot_start_exits(tmp_path):
    """A worker that dies as the pool starts (here: no Redis) stops the pool, exit 1, so that
    ``make run`` sees it and says so."""
    env = {**os.environ, **WORKER_ENV, "REDIS_URL": "redis://127.0.0.1:9/0",
           "REDIS_TIMEOUT": "0.2"}
    done = subprocess.run([sys.executable, "-m", "worker", "--processes", "2", "--cron"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=PATIENCE)
    assert done.returncode == 1, done.stderr
    assert "as it started: stopping the pool" in done.stderr


def test_a_replacement_is_started_with_the_pools_arguments_and_interpreter_flags():
    """``--member`` comes before the pool's arguments (which may end with ``-- QUEUE…``), and
    the interpreter's flags (``-X dev`` here) are the pool's."""
    code = ("import json; from worker.keeper import member_command; "
            "print(json.dumps(member_command(['--processes', '2', '--', 'interactive'], 0, 1)))")
    done = subprocess.run([sys.executable, "-X", "dev", "-c", code], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    command = json.loads(done.stdout)
    assert command[0] == sys.executable and "dev" in command[:command.index("-m")]
    assert command[command.index("-m"):] == ["-m", "worker", "--member", "0.1", "--processes",
                                             "2", "--", "interactive"]
