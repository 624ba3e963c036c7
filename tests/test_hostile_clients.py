"""Slow and stalled clients against the API served as ``make run`` serves it (gunicorn with the
API's worker, :mod:`api.gunicorn_worker`): they cost the other accounts nothing.

The server has few threads (:data:`THREADS`), so each attack needs only a few connections:
without the defences each one took every thread, and every other request timed out.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from datetime import timedelta

import pytest
import requests

from api import inflight
from core.config import ApiConfig, LaunchConfig, variables
from launcher.embedded import free_port
from launcher.serve import gunicorn_command
from storage import collection_results, collection_store, collections
from storage.collection_store import PageOutcome
from storage.models import CollectionStatus
from tests.conftest import ALLOWED, ROOT, new_customer
from tests.support.waits import wait_until

THREADS = 8
#: Seconds a request of the well-behaved account may take before the test calls it starved.
BOUND = 20
#: The server's timeouts: a head, a body, each piece of an answer.
HEADER_TIMEOUT, BODY_TIMEOUT, WRITE_TIMEOUT = 8, 8, 3
BIG_TEXT = "x" * 400_000


@pytest.fixture(scope="module")
def server(sqlite_url, redis_url, workers, tmp_path_factory) -> Iterator[str]:
    """The API under gunicorn, on the session's database, Redis and workers; its base URL."""
    port = free_port()
    log = tmp_path_factory.mktemp("hostile") / "gunicorn.log"
    env = {k: v for k, v in os.environ.items() if k not in variables()}
    env.update(DATABASE_URL=sqlite_url, REDIS_URL=redis_url, CRAWLER_ALLOWED_NETWORKS=ALLOWED,
               CLIENT_HEADER_TIMEOUT=str(HEADER_TIMEOUT), CLIENT_BODY_TIMEOUT=str(BODY_TIMEOUT),
               CLIENT_WRITE_TIMEOUT=str(WRITE_TIMEOUT))
    command = gunicorn_command(LaunchConfig(port=port, api_processes=1, api_threads=THREADS),
                               ApiConfig())
    with log.open("wb") as out:  # gunicorn writes to its own copy of it
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out,
                                stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: _answers(base), "gunicorn", 60, proc=proc)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _answers(base: str) -> bool:
    with contextlib.suppress(requests.RequestException):
        return requests.get(f"{base}/healthz", timeout=5).status_code in (200, 503)
    return False


def _connect(base: str, *, receive_buffer: int | None = None) -> socket.socket:
    sock = socket.socket()
    if receive_buffer:  # a client that reads nothing: the server's writes block sooner
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    sock.connect(("127.0.0.1", int(base.rsplit(":", 1)[1])))
    return sock


def _get(base: str, path: str, key: str) -> requests.Response:
    return requests.get(f"{base}/api/service/v1{path}", timeout=BOUND,
                        headers={"Authorization": f"Bearer {key}"})


def _read_all(sock: socket.socket) -> bytes:
    sock.settimeout(BOUND)
    data = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(65536):
            data += chunk
    return data


def _big_collection(app, account_id: str, pages: int = 12) -> str:
    """A finished collection of ``pages`` results of 400 KB each, stored as a worker stores
    them."""
    db = app.extensions["webdata.db"]
    collection_id = collections.create(db, account_id=account_id, mode="batch", extract="page",
                                       spec={"urls": []}, max_running=5).id
    outcomes = [PageOutcome(key=collection_results.page_key(f"http://big.test/{n}"),
                            url=f"http://big.test/{n}", status="succeeded",
                            final_url=f"http://big.test/{n}", status_code=200,
                            fetched_at="2026-11-26T10:00:00Z",
                            data={"title": f"page {n}", "text": BIG_TEXT, "language": "en",
                                  "links": [], "metadata": None})
                for n in range(pages)]
    collection_store.store(db, collection_id, outcomes)
    collections.finish(db, collection_id, CollectionStatus.COMPLETED, retention=timedelta(days=7))
    return collection_id


def _stall(base: str, key: str, path: str, count: int) -> list[socket.socket]:
    """``count`` connections that ask ``path`` and read nothing of the answer."""
    stalled = []
    for _ in range(count):
        sock = _connect(base, receive_buffer=4096)
        sock.sendall(f"GET /api/service/v1{path} HTTP/1.1\r\nHost: x\r\n"
                     f"Authorization: Bearer {key}\r\n\r\n".encode())
        stalled.append(sock)
    return stalled


def test_clients_trickling_their_headers_hold_no_thread(server, app, site):
    """Five times as many connections as threads, each sending one header line now and then:
    every request of another account is answered, and the tricklers get 408."""
    who = new_customer(app, credits=10)
    slow = [_connect(server) for _ in range(5 * THREADS)]
    for sock in slow:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
    stop = threading.Event()

    def trickle() -> None:
        while not stop.wait(0.5):
            for sock in slow:
                with contextlib.suppress(OSError):
                    sock.sendall(b"X-Slow: 1\r\n")

    trickler = threading.Thread(target=trickle, daemon=True)
    trickler.start()
    try:
        for _ in range(2 * THREADS):
            assert _get(server, "/account", who.key).status_code == 200
        scraped = requests.post(f"{server}/api/service/v1/scrape", timeout=BOUND,
                                json={"url": f"{site}/article"}, headers=who.headers)
        assert scraped.status_code == 200, scraped.text
    finally:
        stop.set()
        trickler.join()
    for sock in slow:
        answer = _read_all(sock)
        sock.close()
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408 "), answer[:200]
        error = json.loads(body)
        assert (error["code"], error["error"]) == (408, "bad_request")


def test_a_body_sent_slowly_holds_no_thread(server, app):
    """A body that never finishes arriving is answered 408 and costs no thread meanwhile."""
    who = new_customer(app, credits=10)
    slow = []
    for _ in range(2 * THREADS):
        sock = _connect(server)
        sock.sendall(b"POST /api/service/v1/scrape HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Type: application/json\r\nContent-Length: 100\r\n"
                     + f"Authorization: Bearer {who.key}\r\n\r\n".encode() + b'{"url": ')
        slow.append(sock)
    for _ in range(2 * THREADS):
        assert _get(server, "/account", who.key).status_code == 200
    for sock in slow:
        answer = _read_all(sock)
        sock.close()
        assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
    assert who.balance() == 10  # nothing ran


def test_an_expect_continue_body_is_read_without_a_thread(server, app):
    """``Expect: 100-continue`` is answered by the server's main loop; the request then runs."""
    who = new_customer(app, credits=10)
    body = json.dumps({"url": "http://169.254.169.254/"}).encode()
    sock = _connect(server)
    sock.sendall(b"POST /api/service/v1/scrape HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                 b"Content-Type: application/json\r\nConnection: close\r\n"
                 + f"Content-Length: {len(body)}\r\nAuthorization: Bearer {who.key}\r\n\r\n"
                 .encode())
    sock.settimeout(BOUND)
    assert sock.recv(25) == b"HTTP/1.1 100 Continue\r\n\r\n"
    sock.sendall(body)
    answer = _read_all(sock)
    sock.close()
    assert answer.startswith(b"HTTP/1.1 403 "), answer[:300]  # the source policy's refusal
    assert answer.count(b"100 Continue") == 0


def test_stalled_readers_of_results_pages_cost_other_accounts_nothing(server, app):
    """An account opening more results pages than the server has threads and reading none:
    it holds at most its plan's requests in flight (free: 4), and each for the write timeout."""
    attacker, other = new_customer(app, credits=10), new_customer(app, credits=10)
    collection_id = _big_collection(app, attacker.account_id)
    path = f"/collections/{collection_id}/results?limit=1000"
    redis = app.extensions["webdata.redis"]
    stalled = _stall(server, attacker.key, path, 3 * THREADS)
    try:
        wait_until(lambda: inflight.held(redis, attacker.account_id) == 4,
                   "the attacker's pages to hold its 4 slots", BOUND)
        for _ in range(THREADS):
            assert _get(server, "/account", other.key).status_code == 200
        # Past the write timeout the server gives up on them: their slots come back.
        wait_until(lambda: inflight.held(redis, attacker.account_id) == 0,
                   "the stalled pages to be given up", BOUND)
    finally:
        for sock in stalled:
            sock.close()
    page = _get(server, path, attacker.key)
    assert page.status_code == 200
    body = page.json()
    assert 1 <= len(body["results"]) < 12 and body["next_cursor"]  # 2 MiB at most
    assert len(page.content) <= 2 * 1024 * 1024 + len(BIG_TEXT)


def test_one_accounts_stalled_exports_leave_other_accounts_theirs(server, app):
    attacker = new_customer(app, credits=10, plan="enterprise")
    other = new_customer(app, credits=10)
    mine = _big_collection(app, attacker.account_id)
    theirs = _big_collection(app, other.account_id, pages=3)
    redis = app.extensions["webdata.redis"]
    stalled = _stall(server, attacker.key, f"/collections/{mine}/export?format=jsonl", 12)
    try:
        wait_until(lambda: inflight.held(redis, attacker.account_id, inflight.EXPORTS) == 2,
                   "two stalled exports", BOUND)
        refused = _get(server, f"/collections/{mine}/export?format=jsonl", attacker.key)
        assert refused.status_code == 429 and refused.json()["error"] == "rate_limited"
        for _ in range(3):
            answer = _get(server, f"/collections/{theirs}/export?format=jsonl", other.key)
            assert answer.status_code == 200, answer.text[:300]
            assert len(answer.text.splitlines()) == 3
    finally:
        for sock in stalled:
            sock.close()
    wait_until(lambda: inflight.held(redis, attacker.account_id, inflight.EXPORTS) == 0,
               "the closed exports' slots to come back", BOUND)


def test_a_client_that_does_not_close_does_not_hold_the_main_loop(server, app):
    """Answers with ``Connection: close`` to clients that never close their end: the server
    lingers on each without blocking the loop that accepts everyone's connections."""
    who = new_customer(app, credits=10)
    lingering = []
    for _ in range(20):
        sock = _connect(server)
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        lingering.append(sock)
    answers = [_get(server, "/account", who.key).status_code for _ in range(THREADS)]
    assert answers == [200] * THREADS  # gunicorn lingered 2 s on each, in that loop
    for sock in lingering:
        assert _read_all(sock).startswith(b"HTTP/1.1 200 ")
        sock.close()
