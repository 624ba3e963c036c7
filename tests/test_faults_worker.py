"""A worker killed (``kill -9``) while it runs a request's job: the client is answered at once
with 503 ``unavailable`` (not after the whole wait, 504) and its credit is released."""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid

from redis import Redis
from rq import Queue
from rq.registry import StartedJobRegistry

import api.workers
from api import create_app
from api.dispatch import NO_WORKER_MESSAGE, Lookout
from tests.conftest import WORKER_ENV, _redis_db, _start_workers, _stop, make_config, new_customer
from tests.support.books import assert_books_balance
from tests.test_faults_redis import answered
from worker import queues

#: A Redis database of this test's own: its worker dies, no other test may need it.
DB_OFFSET = 9


def test_a_job_whose_worker_is_killed_is_answered_promptly(redis_url, database_url, site,
                                                          tmp_path):
    url = _redis_db(redis_url, DB_OFFSET)
    Redis.from_url(url).flushdb()  # what an earlier run left: its dead worker, its job
    # The page sends one byte a second: the crawl is still running when the worker dies.
    env = {**WORKER_ENV, "CRAWLER_DOWNLOAD_TIMEOUT": "50", "CRAWLER_CRAWL_TIMEOUT": "55"}
    procs = _start_workers(url, 1, env, tmp_path / "worker.log")
    try:
        # The wait is longer than the test's bound: only noticing the death can answer in time.
        app = create_app(make_config(database_url, url, job_wait_seconds=60))
        customer = new_customer(app, credits=3)
        registry = StartedJobRegistry(queues.INTERACTIVE,
                                      connection=app.extensions["webdata.redis"])

        def scrape_then_kill():
            def kill_when_started():
                deadline = time.monotonic() + 20
                while not registry.get_job_ids() and time.monotonic() < deadline:
                    time.sleep(0.05)
                os.kill(procs[0].pid, signal.SIGKILL)

            killer = threading.Thread(target=kill_when_started, daemon=True)
            killer.start()
            return customer.post("/scrape", {"url": f"{site}/drip"})

        response = answered(scrape_then_kill)
        assert procs[0].wait(timeout=5) == -signal.SIGKILL
        assert response.status_code == 503, response.get_data(as_text=True)
        body = response.get_json()
        assert body["error"] == "unavailable" and "worker stopped" in body["message"]
        assert customer.balance() == 3
        row = customer.activity()[0]
        assert (row["operation"], row["status"], row["credits"]) == ("scrape", "failed", 0)
        assert_books_balance(app, customer.account_id)
    finally:
        _stop(procs)


def test_a_job_queued_while_every_worker_is_dead_is_answered_promptly(redis_url, sqlite_url,
                                                                     site, tmp_path,
                                                                     monkeypatch):
    """The API trusts its last look for workers (made just before the kill): the job is
    queued, and the lookout finds its queue's only worker dead."""
    monkeypatch.setattr(api.workers, "SEEN_FOR", 60)
    url = _redis_db(redis_url, DB_OFFSET + 1)
    Redis.from_url(url).flushdb()
    procs = _start_workers(url, 1, WORKER_ENV, tmp_path / "worker.log")
    try:
        app = create_app(make_config(sqlite_url, url, job_wait_seconds=60))
        customer = new_customer(app, credits=3)
        assert app.test_client().get("/healthz").status_code == 200  # seen
        os.kill(procs[0].pid, signal.SIGKILL)  # its key stays in Redis for minutes
        procs[0].wait()
        response = answered(lambda: customer.post("/scrape", {"url": f"{site}/article"}))
        assert response.status_code == 503, response.get_data(as_text=True)
        assert response.get_json()["message"] == NO_WORKER_MESSAGE  # none ever took it
        assert customer.balance() == 3
        assert_books_balance(app, customer.account_id)
    finally:
        _stop(procs)


def test_a_job_enqueued_on_a_stale_look_for_workers_is_abandoned_at_the_first_look(redis_url):
    """The API trusts a look that found workers for a second (``WORKERS_SEEN_FOR``); a job
    enqueued on it after the last worker left is abandoned at the lookout's first look. Any
    other queued job waits for a worker to come back, as before."""
    redis = Redis.from_url(redis_url)
    queue = Queue(f"nobody-{uuid.uuid4().hex}", connection=redis)  # no worker listens on it
    job = queue.enqueue("time.time")
    try:
        trusting = Lookout(job, queue, confirm_workers=True)
        assert trusting.abandoned() == "no worker listens on the queue"
        assert trusting.abandoned() is None  # only the first look
        assert Lookout(job, queue).abandoned() is None
    finally:
        job.delete()


def test_a_job_left_queued_with_no_worker_at_all_is_abandoned_after_a_grace(redis_url,
                                                                          monkeypatch):
    """The last worker shut down cleanly (it left no key to find dead): the queued job's
    request waited out its whole deadline (504). Past the grace a supervisor needs to start a
    worker again, it is abandoned (503); a worker that comes back in time resets it."""
    import api.dispatch

    monkeypatch.setattr(api.dispatch, "NO_WORKER_GRACE", 0.3)
    redis = Redis.from_url(redis_url)
    queue = Queue(f"nobody-{uuid.uuid4().hex}", connection=redis)  # no worker listens on it
    job = queue.enqueue("time.time")
    try:
        lookout = Lookout(job, queue)
        assert lookout.abandoned() is None  # within the grace
        time.sleep(0.4)
        assert lookout.abandoned() == "no worker has listened on the queue for 0.3 s"
    finally:
        job.delete()
