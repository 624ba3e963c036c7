"""Ready means ready: an API process that has not yet seen a live worker is
*starting*: ``/healthz`` answers 503 ``starting`` and a request waits for the first worker
instead of failing; once workers were seen and are gone, requests are answered 503 at once.

Each test has a Redis of its own: what it counts is every worker registered there."""

from __future__ import annotations

import os
import signal
import threading

import pytest
from rq import Queue

from api import create_app, dispatch, workers
from launcher.embedded import start_redis
from tests.conftest import WORKER_ENV, _start_workers, _stop, make_config, new_customer
from tests.support.books import assert_books_balance
from tests.support.waits import wait_until
from tests.test_faults_redis import answered
from worker import queues


@pytest.fixture
def own_redis(tmp_path):
    proc, url = start_redis(tmp_path)
    yield url
    proc.kill()
    proc.wait()


def health(app) -> tuple[int, dict]:
    answer = app.test_client().get("/healthz")
    return answer.status_code, answer.get_json()


def test_a_starting_deployment_waits_for_its_first_worker(own_redis, sqlite_url, site,
                                                         tmp_path):
    # What a killed earlier run leaves: a registered worker that is dead (kill -9).
    dead = _start_workers(own_redis, 1, WORKER_ENV, tmp_path / "dead.log")
    os.kill(dead[0].pid, signal.SIGKILL)
    dead[0].wait()
    app = create_app(make_config(sqlite_url, own_redis, job_wait_seconds=120))
    customer = new_customer(app, credits=3)

    status, body = health(app)
    assert (status, body["status"]) == (503, "starting"), body
    assert body["workers"] == {"interactive": 0, "collections": 0, "maintenance": 0}
    assert (body["redis"], body["database"], body["cron"]) == ("ok", "ok", 0)

    answer: dict = {}
    waiting = threading.Thread(target=lambda: answer.update(
        response=customer.post("/scrape", {"url": f"{site}/article"})))
    waiting.start()
    queue = Queue(queues.INTERACTIVE, connection=app.extensions["webdata.redis"])
    wait_until(lambda: queue.count == 1, "the request's job to be queued")
    # (returns at once: the dead worker's registration counts for _start_workers)
    procs = _start_workers(own_redis, 1, WORKER_ENV, tmp_path / "worker.log")
    try:
        waiting.join(timeout=120)
        response = answer["response"]
        assert response.status_code == 200, response.get_data(as_text=True)
        assert response.get_json()["title"] == "Tide tables of the Thames estuary"
        status, body = health(app)
        assert (status, body["status"], body["workers"]["interactive"]) == (200, "ok", 1)
    finally:
        _stop(procs)  # a warm shutdown: it leaves the queue's registration

    # Seen, then gone: no waiting any more.
    status, body = health(app)
    assert (status, body["status"], body["workers"]["interactive"]) == (503, "degraded", 0)
    gone = answered(lambda: customer.post("/scrape", {"url": f"{site}/article"}))
    assert gone.status_code == 503, gone.get_data(as_text=True)
    assert gone.get_json()["message"] == dispatch.NO_WORKER_MESSAGE
    assert customer.balance() == 2
    assert_books_balance(app, customer.account_id)


def test_a_deployment_whose_worker_never_comes_answers_503_at_the_deadline(own_redis,
                                                                          sqlite_url, site):
    app = create_app(make_config(sqlite_url, own_redis, job_wait_seconds=1))
    customer = new_customer(app, credits=3)
    response = customer.post("/scrape", {"url": f"{site}/article"})
    assert response.status_code == 503, response.get_data(as_text=True)
    body = response.get_json()
    assert (body["error"], body["message"]) == ("unavailable", dispatch.NOT_STARTED_MESSAGE)
    # Its job is not left for a worker that comes later to crawl for nobody.
    assert Queue(queues.INTERACTIVE, connection=app.extensions["webdata.redis"]).count == 0
    assert customer.balance() == 3
    row = customer.activity()[0]
    assert (row["status"], row["credits"]) == ("failed", 0)
    assert_books_balance(app, customer.account_id)


def test_a_worker_killed_after_it_was_seen_is_answered_at_once(own_redis, sqlite_url, site,
                                                              tmp_path, monkeypatch):
    """Its registration stays in Redis for minutes: a worker of this machine whose pid is gone
    is not counted."""
    monkeypatch.setattr(workers, "SEEN_FOR", 0)  # every request looks again
    procs = _start_workers(own_redis, 1, WORKER_ENV, tmp_path / "worker.log")
    try:
        app = create_app(make_config(sqlite_url, own_redis, job_wait_seconds=120))
        customer = new_customer(app, credits=3)
        assert health(app)[0] == 200
        assert customer.post("/scrape", {"url": f"{site}/article"}).status_code == 200
        os.kill(procs[0].pid, signal.SIGKILL)
        procs[0].wait()
        assert workers.count(app.extensions["webdata.redis"], [queues.INTERACTIVE]) == {
            queues.INTERACTIVE: workers.Count(registered=1, alive=0)}
        status, body = health(app)
        assert (status, body["status"], body["workers"]["interactive"]) == (503, "degraded", 0)
        response = answered(lambda: customer.post("/scrape", {"url": f"{site}/article"}))
        assert response.status_code == 503, response.get_data(as_text=True)
        assert response.get_json()["message"] == dispatch.NO_WORKER_MESSAGE
        assert customer.balance() == 2
    finally:
        _stop(procs)
