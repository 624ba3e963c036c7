"""The HTTP of webhook attempts against real sockets on loopback: a receiver's events go over
one kept-alive connection; a connection the receiver closed while it sat idle costs a new
one, not a failed attempt; an answer with a large body is not read and its connection not
kept; a receiver that drips a kept connection's answer is held to the attempt's deadline."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from core.policy import SourcePolicy
from worker import webhook_http
from worker.webhook_http import Connections, post

HOST = "127.0.0.2"
POLICY = SourcePolicy.from_lists(f"{HOST}/32", "", "")


class Server:
    """A receiver on HTTP/1.1: the client port of each request, and how it answers."""

    def __init__(self) -> None:
        self.ports: list[int] = []
        self.close_after = False  # hang up after answering, without saying so
        self.body = 0  # bytes of answer body (announced)
        self.drip = 0.0  # after the first request: the answer a byte at a time
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                server.ports.append(self.client_address[1])
                if server.drip and len(server.ports) > 1:
                    for byte in b"HTTP/1.1 204 No Content\r\n\r\n":
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(server.drip)
                    return
                self.send_response(200 if server.body else 204)
                if server.body:
                    self.send_header("Content-Length", str(server.body))
                self.end_headers()
                if server.body:
                    self.wfile.write(b"x" * server.body)
                self.close_connection = server.close_after

            def log_message(self, *_: object) -> None:
                pass

        self.http = ThreadingHTTPServer((HOST, 0), Handler)
        self.http.daemon_threads = True
        threading.Thread(target=self.http.serve_forever, daemon=True).start()
        self.url = f"http://{HOST}:{self.http.server_address[1]}/hooks"


@pytest.fixture
def server() -> Iterator[Server]:
    made = Server()
    yield made
    made.http.shutdown()
    made.http.server_close()


@pytest.fixture
def connections() -> Iterator[Connections]:
    kept = Connections()
    yield kept
    kept.close()


def send(server: Server, connections: Connections, timeout: float = 5.0) -> int:
    return post(server.url, b"{}", {"webhook-id": "evt_x"}, POLICY, timeout, connections)


def test_a_receiver_s_events_share_one_connection(server, connections):
    assert [send(server, connections) for _ in range(20)] == [204] * 20
    assert len(set(server.ports)) == 1


def test_a_connection_closed_while_idle_costs_a_new_one_not_the_attempt(server, connections):
    server.close_after = True
    assert [send(server, connections) for _ in range(3)] == [204] * 3
    assert len(server.ports) == 3  # each sent once, on a new connection each
    assert len(set(server.ports)) == 3


def test_an_idle_connection_is_not_kept_past_its_time(server, connections, monkeypatch):
    monkeypatch.setattr(webhook_http, "KEEP_IDLE", 0.05)
    send(server, connections)
    time.sleep(0.1)
    send(server, connections)
    assert len(set(server.ports)) == 2


@pytest.mark.parametrize(("body", "kept"), [(100, True), (webhook_http.KEPT_BODY + 1, False)])
def test_an_answer_s_body_is_read_only_when_small(server, connections, body, kept):
    server.body = body
    assert send(server, connections) == send(server, connections) == 200
    assert (len(set(server.ports)) == 1) is kept


def test_a_kept_connection_that_drips_its_answer_is_cut_at_the_deadline(server, connections):
    server.drip = 0.2  # 26 bytes: over 5 s
    assert send(server, connections) == 204
    began = time.monotonic()
    with pytest.raises(TimeoutError, match="timed out"):
        send(server, connections, timeout=0.5)
    assert time.monotonic() - began < 2.0
