"""Prometheus metrics: the API's ``GET /metrics`` behind ``METRICS_TOKEN`` (counted requests,
credits and cache hits; queues, collections and the outbox read at each scrape), added up over
gunicorn's processes in multiprocess mode; a worker's on its own port."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families

from api import create_app
from core.config import ROOT, ApiConfig, LaunchConfig
from launcher.embedded import free_port
from launcher.serve import gunicorn_command
from tests.conftest import make_config, new_customer
from tests.support.collection_stack import Stack, wait_final
from tests.support.waits import wait_until
from tests.test_collections import start

TOKEN = "metrics-token-for-tests"


def samples(text: str) -> dict[tuple[str, tuple], float]:
    """Every sample: (name, sorted labels) → value."""
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


def value(found: dict, name: str, **labels: str) -> float:
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


@pytest.fixture(scope="module")
def metered(stack):
    """The API of a collection stack (its workers keep the page cache) with a token."""
    return create_app(make_config(stack.database_url, stack.redis_url, metrics_token=TOKEN))


def scrape(app) -> dict:
    answer = app.test_client().get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert answer.status_code == 200 and answer.mimetype == "text/plain"
    return samples(answer.get_data(as_text=True))


def test_metrics_need_the_operators_token(metered, stack):
    client = metered.test_client()
    assert client.get("/metrics").status_code == 401
    wrong = client.get("/metrics", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and wrong.get_json()["error"] == "unauthorized"
    key = new_customer(metered).key  # an account's key is not the operator's token
    assert client.get("/metrics", headers={"Authorization": f"Bearer {key}"}).status_code == 401
    off = stack.app.test_client().get("/metrics")
    assert off.status_code == 404  # no token set: not served at all


def test_requests_credits_and_stores_are_counted(metered, site):
    before = scrape(metered)
    who = new_customer(metered, credits=50)
    assert who.get("/account").status_code == 200
    url, scrapes = f"{site}/article?metrics={time.monotonic_ns()}", 0

    def hit() -> bool:  # the first answer is kept by the worker's cache writer, soon
        nonlocal scrapes
        answer = who.post("/scrape", {"url": url, "max_age": 600})
        scrapes += 1
        return answer.get_json()["cached"]

    wait_until(hit, "an answer from the page cache", timeout=30, pause=0.2)
    after = scrape(metered)
    route = "/api/service/v1/account"
    assert value(after, "webdata_requests_total", route=route, status="200") == value(
        before, "webdata_requests_total", route=route, status="200") + 1
    assert value(after, "webdata_request_seconds_count", route=route) >= 1
    assert value(after, "webdata_credits_booked_total", operation="scrape") - value(
        before, "webdata_credits_booked_total", operation="scrape") == scrapes
    assert value(after, "webdata_cache_hits_total", operation="scrape") - value(
        before, "webdata_cache_hits_total", operation="scrape") == 1
    for queue in ("maintenance", "interactive", "collections"):
        assert ("webdata_jobs", (("queue", queue), ("state", "queued"))) in after
    assert value(after, "webdata_workers") >= 1
    assert ("webdata_webhook_outbox", ()) in after
    assert ("webdata_frontier_urls", (("state", "waiting"),)) in after


def test_gunicorns_processes_are_added_up(sqlite_url, redis_url, workers, tmp_path):
    port = free_port()
    launch = LaunchConfig(port=port, api_processes=2, api_threads=2)
    shared = tmp_path / "metrics"
    shared.mkdir()
    env = {**os.environ, "DATABASE_URL": sqlite_url, "REDIS_URL": redis_url,
           "HOME": str(tmp_path), "METRICS_TOKEN": TOKEN,
           "PROMETHEUS_MULTIPROC_DIR": str(shared)}
    env.pop("XDG_RUNTIME_DIR", None)
    with (tmp_path / "gunicorn.log").open("wb") as out:
        proc = subprocess.Popen(gunicorn_command(launch, ApiConfig()), cwd=ROOT, env=env,
                                stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: _answers(f"{base}/healthz"), "gunicorn to answer", proc=proc)
        for _ in range(20):  # new connections: both processes take some
            _answers(f"{base}/api/service/v1/openapi.json")
        request = urllib.request.Request(f"{base}/metrics",
                                         headers={"Authorization": f"Bearer {TOKEN}"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            found = samples(answer.read().decode())
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert value(found, "webdata_requests_total", route="/api/service/v1/openapi.json",
                 status="200") == 20
    assert len(list(shared.glob("*.db"))) >= 2  # samples of both processes


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            answer.read()
            return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def lone_worker(tmp_path_factory, sqlite_url, site) -> Iterator[tuple[Stack, int]]:
    """A stack whose one worker serves its metrics (all the collection's pages are its)."""
    stack = Stack(tmp_path_factory.mktemp("metrics-stack"), sqlite_url, site, workers=0)
    port = free_port()
    env = {**os.environ, **stack.env, "REDIS_URL": stack.redis_url}
    log = tmp_path_factory.mktemp("worker") / "worker.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "worker", "--metrics-port", str(port),
                                 "maintenance", "interactive", "collections"], cwd=ROOT,
                                env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: _answers(f"http://127.0.0.1:{port}/metrics"), "worker metrics",
                   proc=proc, timeout=60)
        yield stack, port
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        stack.close()


def test_a_workers_metrics_count_its_pages(lone_worker, site):
    stack, port = lone_worker
    who = new_customer(stack.app, credits=10, plan="standard")
    urls = [f"{site}/article?m={n}" for n in range(4)] + [f"{site}/missing"]
    final = wait_final(who, start(who, {"mode": "batch", "urls": urls})["id"])
    assert (final["progress"]["succeeded"], final["progress"]["failed"]) == (4, 1)
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        found = samples(answer.read().decode())
    assert value(found, "webdata_collection_pages_total", status="succeeded") == 4
    assert value(found, "webdata_collection_pages_total", status="failed") == 1
    assert value(found, "webdata_collection_credits_total") == 4
    assert value(found, "webdata_worker_slots") >= 1


def test_a_worker_whose_metrics_port_is_taken_takes_the_next():
    """Two workers started alike on one host (one environment file, two units): the second
    serves its metrics on the next free port instead of failing to start."""
    import socket

    from worker import metrics

    port = free_port()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        served = metrics.serve(port, "127.0.0.1", 4, lambda: 1)
    assert served > port
    with urllib.request.urlopen(f"http://127.0.0.1:{served}/metrics", timeout=10) as answer:
        assert value(samples(answer.read().decode()), "webdata_worker_slots") == 4
