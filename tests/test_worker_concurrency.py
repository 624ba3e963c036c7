"""One warm worker process keeps many jobs in flight: still RQ jobs (registries, results,
timeouts), stopped alone when over their timeout, finished on a warm shutdown, released when
the process is killed, and background work never takes the last slots."""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from redis import Redis
from rq import Worker
from rq.command import send_stop_job_command
from rq.job import Job
from rq.registry import StartedJobRegistry
from rq.timeouts import JobTimeoutException

from api import create_app
from core import stops
from tests.conftest import WORKER_ENV, _redis_db, _start_workers, _stop, make_config, new_customer
from tests.support.books import assert_books_balance
from tests.support.waits import job_results, wait_until
from worker import jobs, queues, timeouts
from worker.replies import ReplyingJob
from worker.timeouts import JobStopped, ThreadDeathPenalty
from worker.worker import WarmWorker

pytestmark = pytest.mark.stack  # starts processes (tests/conftest.py)

#: Redis databases of this module's own workers (each test flushes and owns one).
DB_OFFSETS = {"inflight": 11, "timeout": 12, "kill": 13, "shutdown": 14, "reserve": 15,
              "idle-stop": 3, "stop-job": 4, "give-up": 6}
#: The slow page's delay, in ms: long enough for every job to be open at once.
SLOW_MS = 2500


@pytest.fixture
def own_pool(redis_url, tmp_path):
    """Start one worker process on a flushed Redis database of the test's own."""
    started: list = []

    def start(name: str, env: dict[str, str] | None = None,
              queue_names: tuple[str, ...] = ("interactive",)):
        url = _redis_db(redis_url, DB_OFFSETS[name])
        connection = Redis.from_url(url)
        connection.flushdb()
        procs = _start_workers(url, 1, {**WORKER_ENV, **(env or {})},
                               tmp_path / f"{name}.log", queues=queue_names)
        started.extend(procs)
        return connection, procs[0], url

    yield start
    _stop(started)


def test_one_worker_process_keeps_many_requests_in_flight(own_pool, site, site_server):
    connection, _, _ = own_pool("inflight")
    tag = uuid.uuid4().hex
    queue = queues.queue(queues.INTERACTIVE, connection)
    enqueued = [queue.enqueue(jobs.scrape, f"{site}/slow/{tag}?ms={SLOW_MS}&n={n}")
                for n in range(24)]
    registry = StartedJobRegistry(queues.INTERACTIVE, connection=connection)
    # RQ sees them all running at once: registry and the worker's executions.
    wait_until(lambda: registry.count >= 16, "16 jobs started")
    (worker,) = Worker.all(connection=connection)
    assert worker.current_execution_count >= 16
    pages = [result.return_value for result in job_results(enqueued)]
    assert [page["status"] for page in pages] == ["succeeded"] * 24
    assert all(page["data"]["title"] == "Tide tables of the Thames estuary" for page in pages)
    assert site_server.open_peak[tag] >= 16  # the target saw them at once, from one process
    for job in enqueued:
        job.refresh()
    assert {job.worker_name for job in enqueued} == {worker.name}


def _neighbours_and_a_drip(own_pool, name: str, site: str, count: int, ms: int,
                           **drip_options):
    """A worker running ``count`` slow pages (``ms``) and one that never ends on its own:
    /drip sends a byte a second for a minute. (worker process, neighbours, dripping job)"""
    env = {"CRAWLER_DOWNLOAD_TIMEOUT": "20", "CRAWLER_CRAWL_TIMEOUT": "25"}
    connection, proc, _ = own_pool(name, env)
    queue = queues.queue(queues.INTERACTIVE, connection)
    tag = uuid.uuid4().hex
    neighbours = [queue.enqueue(jobs.scrape, f"{site}/slow/{tag}?ms={ms}&n={n}")
                  for n in range(count)]
    return proc, neighbours, queue.enqueue(jobs.scrape, f"{site}/drip", **drip_options)


def test_a_job_over_its_timeout_is_stopped_alone(own_pool, site):
    proc, neighbours, dripping = _neighbours_and_a_drip(own_pool, "timeout", site, 3, 5000,
                                                        job_timeout=1)
    (stopped,) = job_results([dripping], 30)
    assert stopped.type == stopped.Type.FAILED
    assert "JobTimeoutException" in stopped.exc_string
    pages = job_results(neighbours)
    assert [result.type for result in pages] == [stopped.Type.SUCCESSFUL] * 3
    assert all(result.return_value["data"]["text"] for result in pages)
    dripping.refresh()
    for job in neighbours:
        job.refresh()
        # each neighbour was running when the timeout struck, and still finished its page
        assert job.started_at < dripping.ended_at < job.ended_at
    assert proc.poll() is None


def _timed_jobs(checkpoints: bool) -> list[str]:
    """A 3-second job and a quick one, each under a 1-second timeout, the slow one reaching a
    checkpoint every 10 ms or none; what each raised."""
    struck: list[str] = []

    def job(seconds: float, name: str) -> None:
        try:
            with ThreadDeathPenalty(1, JobTimeoutException):
                end = time.monotonic() + seconds
                while time.monotonic() < end:
                    time.sleep(0.01)
                    if checkpoints:
                        stops.checkpoint()
            for _ in range(150):  # well past the timer's second, outside the block
                time.sleep(0.01)
                stops.checkpoint()
        except JobTimeoutException as exc:
            struck.append(f"{name}: {exc}")

    threads = [threading.Thread(target=job, args=(3, "slow")),
               threading.Thread(target=job, args=(0.1, "quick"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    return struck


def test_a_timeout_strikes_only_inside_its_block():
    """The timer cannot reach the job thread once the job has left its block."""
    assert _timed_jobs(checkpoints=True) == ["slow: The job exceeded its timeout and was stopped."]


def test_a_job_that_reaches_no_checkpoint_is_stopped_by_force(monkeypatch):
    monkeypatch.setattr(timeouts, "FORCE_AFTER", 0.5)
    assert _timed_jobs(checkpoints=False) == ["slow: The job exceeded its timeout and was stopped."]


def test_a_stop_swallowed_at_a_checkpoint_comes_again_at_the_next():
    """A caller's broad ``except Exception`` (collecting.seeding's around a sitemap fetch)
    does not end the stop: it stays requested until the job leaves its block."""
    struck: list[str] = []

    def job() -> None:
        try:
            with ThreadDeathPenalty(1, JobTimeoutException):
                try:
                    while True:
                        time.sleep(0.01)
                        stops.checkpoint()
                except Exception:
                    struck.append("swallowed")
                while True:
                    time.sleep(0.01)
                    stops.checkpoint()
        except JobTimeoutException:
            struck.append("stopped")

    thread = threading.Thread(target=job)
    thread.start()
    thread.join(timeout=10)
    assert struck == ["swallowed", "stopped"]


def test_a_stop_that_comes_before_the_job_begins_stops_it_as_it_begins():
    """RQ shows a job started before its thread enters the job's block: a stop-job command
    in between is kept for the job (``taken``), not ignored, and a job that is over drops it."""
    assert not ThreadDeathPenalty.stop("not-here")  # not this worker's: ignored
    assert ThreadDeathPenalty.stop("early", taken=True)
    with pytest.raises(JobStopped), ThreadDeathPenalty(60, JobTimeoutException, job_id="early"):
        pytest.fail("the job began")
    with ThreadDeathPenalty(60, JobTimeoutException, job_id="early"):
        pass  # the stop was used up: the same id runs again
    assert ThreadDeathPenalty.stop("finished", taken=True)
    ThreadDeathPenalty.forget("finished")  # the worker's end of the job
    with ThreadDeathPenalty(60, JobTimeoutException, job_id="finished"):
        pass
    # Past its block, still taken (RQ's bookkeeping, its callbacks): too late, not early.
    assert not ThreadDeathPenalty.stop("finished", taken=True)
    with ThreadDeathPenalty(60, JobTimeoutException, job_id="finished"):
        pass  # a callback's block of the same job: not stopped
    ThreadDeathPenalty.forget("finished")


def test_a_killed_worker_releases_every_request_it_held(own_pool, database_url, site):
    env = {"CRAWLER_DOWNLOAD_TIMEOUT": "50", "CRAWLER_CRAWL_TIMEOUT": "55"}
    connection, proc, url = own_pool("kill", env)
    app = create_app(make_config(database_url, url, job_wait_seconds=60))
    customer = new_customer(app, credits=10, plan="enterprise")  # 6 at once: over free's cap
    registry = StartedJobRegistry(queues.INTERACTIVE, connection=connection)
    count = 6

    def kill_when_all_started() -> None:
        wait_until(lambda: registry.count >= count, f"{count} jobs started")
        os.kill(proc.pid, signal.SIGKILL)

    killer = threading.Thread(target=kill_when_all_started, daemon=True)
    killer.start()
    with ThreadPoolExecutor(count) as pool:
        answers = list(pool.map(lambda n: customer.post("/scrape", {"url": f"{site}/drip?{n}"}),
                                range(count)))
    assert proc.wait(timeout=5) == -signal.SIGKILL
    assert [answer.status_code for answer in answers] == [503] * count
    assert customer.balance() == 10
    assert_books_balance(app, customer.account_id)


def test_a_warm_shutdown_finishes_the_jobs_in_flight(own_pool, site):
    connection, proc, _ = own_pool("shutdown")
    queue = queues.queue(queues.INTERACTIVE, connection)
    tag = uuid.uuid4().hex
    enqueued = [queue.enqueue(jobs.scrape, f"{site}/slow/{tag}?ms={SLOW_MS}&n={n}")
                for n in range(4)]
    registry = StartedJobRegistry(queues.INTERACTIVE, connection=connection)
    wait_until(lambda: registry.count == 4, "4 jobs started")
    proc.terminate()
    later = queue.enqueue(jobs.scrape, f"{site}/article")
    assert proc.wait(timeout=30) == 0
    assert [result.return_value["status"] for result in job_results(enqueued, 5)] == \
        ["succeeded"] * 4
    assert later.get_status(refresh=True) == "queued"  # taken by no one after the request


def test_background_jobs_leave_the_reserved_slots_to_interactive_ones(own_pool, site, site_server):
    env = {"WORKER_CONCURRENCY": "4", "WORKER_INTERACTIVE_RESERVE": "2"}
    connection, _, _ = own_pool("reserve", env, ("interactive", "collections"))
    background = queues.queue(queues.COLLECTIONS, connection)
    interactive = queues.queue(queues.INTERACTIVE, connection)
    crawl, page = uuid.uuid4().hex, uuid.uuid4().hex
    crawls = [background.enqueue(jobs.scrape, f"{site}/slow/{crawl}?ms=1500&n={n}")
              for n in range(6)]
    registry = StartedJobRegistry(queues.COLLECTIONS, connection=connection)
    wait_until(lambda: registry.count >= 2, "2 crawls started")
    pages = [interactive.enqueue(jobs.scrape, f"{site}/slow/{page}?ms=1500&n={n}")
             for n in range(2)]
    assert [r.return_value["status"] for r in job_results(pages + crawls)] == ["succeeded"] * 8
    assert site_server.open_peak[crawl] == 2  # never more than their share
    assert site_server.open_peak[page] == 2  # both interactive jobs ran at once, at once:
    for job in pages + crawls:
        job.refresh()
    first_crawls_done = min(job.ended_at for job in crawls)
    assert all(job.started_at < first_crawls_done for job in pages)
    # Taken from the interactive queue alone (one queue: RQ's LMOVE through its intermediate
    # list), yet not left there for RQ's cleanup to fail as "stuck".
    assert connection.llen(interactive.intermediate_queue_key) == 0


def test_a_stop_request_to_an_idle_worker_loses_no_job(own_pool, site):
    connection, proc, _ = own_pool("idle-stop")
    queue = queues.queue(queues.INTERACTIVE, connection)
    (worker,) = Worker.all(connection=connection)
    wait_until(lambda: worker.refresh() or worker.get_state() == "idle",  # handlers are set
               "the worker to wait idle")
    proc.terminate()  # while it waits on the queue: the job below races the stop
    job = queue.enqueue(jobs.scrape, f"{site}/article")
    assert proc.wait(timeout=30) == 0
    status = job.get_status(refresh=True)
    # Either taken and finished before the worker stopped, or still waiting in the queue.
    assert status == "finished" or (status == "queued" and job.id in queue.job_ids), status


def test_rqs_stop_job_command_stops_that_job_alone(own_pool, site):
    proc, neighbours, dripping = _neighbours_and_a_drip(own_pool, "stop-job", site, 2, 3000)
    wait_until(lambda: dripping.get_status(refresh=True) == "started", "the drip to start")
    send_stop_job_command(dripping.connection, dripping.id, serializer=queues.SERIALIZER)
    (stopped,) = job_results([dripping], 30)
    assert stopped.type == stopped.Type.FAILED and "JobStopped" in stopped.exc_string
    assert dripping.get_status(refresh=True) == "stopped"
    assert [r.return_value["status"] for r in job_results(neighbours)] == ["succeeded"] * 2
    assert proc.poll() is None


def test_a_job_the_api_gave_up_on_is_stopped_on_its_worker(own_pool, database_url, site):
    env = {"CRAWLER_DOWNLOAD_TIMEOUT": "50", "CRAWLER_CRAWL_TIMEOUT": "55"}
    connection, _, url = own_pool("give-up", env)
    app = create_app(make_config(database_url, url, job_wait_seconds=2))
    customer = new_customer(app, credits=5)
    answer = customer.post("/scrape", {"url": f"{site}/drip"})
    assert answer.status_code == 504 and customer.balance() == 5
    job = queues.queue(queues.INTERACTIVE, connection).fetch_job(answer.get_json()["request_id"])
    wait_until(lambda: job.get_status(refresh=True) == "stopped",  # not crawling on for nobody
               "the job to stop")
    assert StartedJobRegistry(queues.INTERACTIVE, connection=connection).count == 0


def test_the_reserve_applies_only_to_a_worker_that_takes_interactive_work(redis_url):
    connection = Redis.from_url(redis_url)

    def limit(*names: str) -> int:
        return WarmWorker(list(names), connection=connection, concurrency=4,
                          interactive_reserve=3).background_limit

    assert limit("interactive", "collections") == 1
    assert limit("collections") == 4


def test_finished_jobs_with_long_timeouts_do_not_pile_up_in_the_watchdog():
    from worker.timeouts import _watchdog

    for _ in range(1000):
        with ThreadDeathPenalty(3600, JobTimeoutException):
            pass
    assert len(_watchdog._heap) <= 64 + 1  # none armed: at most the slack before a rebuild


def test_the_warm_worker_sends_early_replies_however_it_is_started(redis_url):
    """``rq worker-pool`` and ``rq worker`` pass RQ's own job class: the warm worker keeps its
    replying one for it, and a job class of the caller's own is left alone."""
    connection = Redis.from_url(redis_url)

    class OwnJob(Job):
        pass

    def job_class(**kwargs: object) -> type:
        return WarmWorker(["interactive"], connection=connection, concurrency=2,
                          interactive_reserve=1, **kwargs).job_class

    assert job_class() is ReplyingJob
    assert job_class(job_class=Job) is ReplyingJob
    assert job_class(job_class="rq.job.Job") is ReplyingJob
    assert job_class(job_class=OwnJob) is OwnJob
