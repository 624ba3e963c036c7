"""A Redis that is frozen (``kill -STOP``) or dead: every request is answered (503
``unavailable`` when it needs Redis, ``/healthz`` naming it) instead of hanging, and the credit
reserved for the request is released."""

from __future__ import annotations

import os
import queue
import signal
import threading

import pytest

from api import create_app
from launcher.embedded import start_redis
from tests.conftest import make_config, new_customer
from tests.support.books import assert_books_balance

#: Seconds a request may take before the test calls it hung. Generous: the answer is expected
#: after about REDIS_TIMEOUT (1 s here); a hung client waits for as long as Redis is stopped.
BOUND = 15


def answered(call):
    """``call()``'s return value, or fail if it does not return within BOUND seconds (in a
    daemon thread, so a hung call cannot keep the test process alive)."""
    box: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: box.put(call()), daemon=True).start()
    try:
        return box.get(timeout=BOUND)
    except queue.Empty:
        pytest.fail(f"no answer within {BOUND} s")


@pytest.fixture
def own_redis(tmp_path):
    proc, url = start_redis(tmp_path)
    yield proc, url
    os.kill(proc.pid, signal.SIGCONT) if proc.poll() is None else None
    proc.kill()
    proc.wait()


def _unavailable(response) -> None:
    assert response.status_code == 503, response.get_data(as_text=True)[:500]
    assert response.get_json()["error"] == "unavailable"


def test_a_frozen_then_dead_redis_is_answered_503(own_redis, database_url, site):
    proc, url = own_redis
    app = create_app(make_config(database_url, url, redis_timeout=1))
    customer = new_customer(app, credits=5)
    client = app.test_client()
    assert client.get("/healthz").get_json()["redis"] == "ok"  # (no worker: 503 starting)

    os.kill(proc.pid, signal.SIGSTOP)
    for _ in range(2):  # the second time through connections the first one left broken
        _unavailable(answered(lambda: customer.post("/scrape", {"url": f"{site}/article"})))
        health = answered(lambda: client.get("/healthz"))
        assert health.status_code == 503
        assert health.get_json()["redis"] == "down" and health.get_json()["database"] == "ok"
    # Reading the account needs no Redis: the rate limiter lets it through.
    assert answered(lambda: customer.get("/account")).status_code == 200

    os.kill(proc.pid, signal.SIGCONT)
    assert answered(lambda: client.get("/healthz")).get_json()["redis"] == "ok"

    proc.kill()
    proc.wait()
    _unavailable(answered(lambda: customer.post("/contacts", {"url": f"{site}/article"})))
    assert answered(lambda: client.get("/healthz")).get_json()["redis"] == "down"

    # a collection that could not be queued: refused, and its line of history says so
    _unavailable(answered(lambda: customer.post(
        "/collections", {"mode": "batch", "urls": [f"{site}/article"]})))

    assert customer.balance() == 5
    failed = [row for row in customer.activity() if row["operation"] in ("scrape", "contacts")]
    assert len(failed) == 3 and {row["credits"] for row in failed} == {0}
    [collection] = [row for row in customer.activity() if row["operation"] == "collection"]
    assert (collection["status"], collection["credits"]) == ("failed", 0), collection
    assert_books_balance(app, customer.account_id)
