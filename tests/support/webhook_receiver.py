"""A webhook receiver on loopback for the tests: it records every request it gets and answers
with the statuses it is given, in order (then the last one again)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from sqlalchemy import update

from storage.models import WebhookEvent, utcnow


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    server: ThreadingHTTPServer
    #: Statuses to answer, in order; the last one is repeated.
    statuses: list[int] = field(default_factory=lambda: [204])
    #: Seconds to wait before answering (a receiver that hangs).
    delay: float = 0.0
    #: The answer sent a byte at a time, this many seconds apart (a receiver that drips).
    drip: float = 0.0
    received: list[Received] = field(default_factory=list)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/hooks"

    def answer(self) -> int:
        return self.statuses.pop(0) if len(self.statuses) > 1 else self.statuses[0]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def start_receiver(host: str = "127.0.0.2") -> Receiver:
    """A receiver on ``host`` (the test site's address, the one the tests' policy allows)."""
    receiver: Receiver

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            receiver.received.append(Received(self.path, dict(self.headers), body))
            time.sleep(receiver.delay)
            status = receiver.answer()
            if receiver.drip:
                with contextlib.suppress(OSError):
                    for byte in f"HTTP/1.1 {status} OK\r\nX-Slow: yes\r\n\r\n".encode():
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(receiver.drip)
                return
            self.send_response(status)
            if 300 <= status < 400:
                self.send_header("Location", "/elsewhere")
            self.send_header("Content-Length", str(1 << 20))
            self.end_headers()
            with contextlib.suppress(OSError):  # the sender hangs up without reading it
                self.wfile.write(b"x" * (1 << 20))

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer((host, 0), Handler)
    server.daemon_threads = True
    receiver = Receiver(server)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return receiver


@pytest.fixture(autouse=True)
def nothing_left_due(app) -> Iterator[None]:
    """The events a test leaves pending are ended after it: the session's database is
    shared, and other modules' tests look at what is due (the oldest 100). A module that
    imports it gets it for each of its tests (its ``app`` fixture's database)."""
    began = utcnow()
    yield
    with app.extensions["webdata.db"].session() as session:
        session.execute(update(WebhookEvent).where(WebhookEvent.status == "pending",
                                                   WebhookEvent.created_at >= began)
                        .values(status="failed", next_attempt_at=None))

