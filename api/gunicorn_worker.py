"""gunicorn's worker for the API: a slow or stalled client costs a file descriptor, never a
thread, and gunicorn's own error answers are in the API's one JSON error shape.

gunicorn's threaded worker hands a connection to a thread as soon as it is accepted, and the
thread then reads the request with blocking calls: 300 clients sending one header line every
8 s held every thread, and every other account's requests timed out. This worker reads each
request in its main loop instead, without blocking, and gives the connection to a thread only
once the whole request (head and body, :mod:`api.http_framing`) has arrived:

- a head must arrive within ``CLIENT_HEADER_TIMEOUT``, its body within ``CLIENT_BODY_TIMEOUT``
  more, else the client is answered 408 and the connection closed; a client address may have
  at most :data:`READING_PER_CLIENT` requests arriving at once per process (more are closed);
- ``Expect: 100-continue`` is answered here, so the body comes while no thread waits for it;
- a thread writes the answer with a timeout (``CLIENT_WRITE_TIMEOUT`` for each piece of it):
  a client that stops reading loses its connection instead of holding the thread;
- a connection is closed gracefully (our FIN sent, the client's last bytes drained) in the
  main loop without blocking it; gunicorn lingered up to 2 s per connection in that loop.

gunicorn answers some requests itself, before any application code runs: a malformed request
line or header (400), a request line over ``limit_request_line`` (414), headers over
``limit_request_fields``/``limit_request_field_size`` (431). It writes those as an HTML page
and offers no setting or hook for their body; the worker class is its documented extension
point (``--worker-class``), so this worker lets gunicorn decide status, reason and logging as
usual, captures the page it would send, and sends the JSON of ``api.errors`` instead.
"""

from __future__ import annotations

import contextlib
import json
import re
import resource
import selectors
import socket
import time
from collections import Counter
from functools import partial
from typing import Any

from gunicorn import util
from gunicorn.workers.gthread import TConn, ThreadWorker

from api.headers import NOSNIFF, REQUEST_ID, new_request_id
from api.http_framing import CONTINUE, HEAD_END, frame, request_length, without_expect
from core.config import load_or_exit

#: Requests one client address may have arriving at once, per API process.
READING_PER_CLIENT = 64
#: The largest body read in the main loop, as a multiple of ``MAX_BODY_BYTES``: a larger one
#: (the batches of the largest plans) is read by the thread that serves it.
BUFFERED_BODY_FACTOR = 4
#: Seconds, and bytes, a graceful close drains what the client still sends.
LINGER_SECONDS = 2.0
LINGER_BYTES = 65536
RECV_BYTES = 65536

#: What each status gunicorn (or this worker) answers itself means to a client.
MESSAGES = {
    400: "The HTTP request is malformed.",
    403: "The request was refused.",
    408: "The request did not arrive in time.",
    414: "The request line (method and URL) is too long.",
    417: "The Expect header cannot be met.",
    431: "The request headers are too many or too large.",
    501: "The request uses a transfer coding this server does not support.",
}
_STATUS_LINE = re.compile(rb"^HTTP/1\.1 (\d{3}) ([^\r\n]*)")


def error_answer(status: int, reason: str) -> bytes:
    """A whole HTTP answer in the API's error shape, closing the connection."""
    request_id = new_request_id()
    body = json.dumps({
        "code": status, "status": reason,
        "error": "bad_request" if status < 500 else "internal_error",
        "message": MESSAGES.get(status, "Something went wrong on our side."),
        "request_id": request_id, "errors": {},
    }).encode()
    headers = {"Connection": "close", "Content-Type": "application/json",
               "Content-Length": str(len(body)), REQUEST_ID: request_id, **NOSNIFF}
    head = (f"HTTP/1.1 {status} {reason}\r\n"
            + "".join(f"{name}: {value}\r\n" for name, value in headers.items())
            + "\r\n").encode("latin1")
    return head + body


class _Captured:
    """Stands in for the client socket while gunicorn writes its error page."""

    def __init__(self) -> None:
        self.data = b""

    def gettimeout(self) -> float:
        return 0.0  # "non-blocking already": gunicorn then just calls sendall

    def sendall(self, data: bytes) -> None:
        self.data += data


class BufferedConn(TConn):
    """A connection whose request is read by the worker's main loop before a thread serves
    it: ``pending`` holds what arrived and no parser has read yet."""

    def __init__(self, *args: Any, linger: Any = None):
        super().__init__(*args)
        self.pending = bytearray()
        self.deadline = 0.0
        self.head_arrived = False
        #: Bytes of the whole request once its head says (0: not known yet).
        self.total = 0
        #: The whole request is in ``pending``: the next enqueue goes to a thread.
        self.whole = False
        #: Called to close gracefully without blocking (the worker's main loop drains);
        #: bytes drained so far.
        self.linger = linger
        self.drained = 0

    @property
    def address(self) -> str:
        return self.client[0] if isinstance(self.client, tuple) else ""

    def close(self, graceful: bool = False) -> None:
        if not graceful or self.linger is None:
            super().close(graceful)
            return
        try:
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            util.close(self.sock)
            return
        self.linger(self)


def _receive(sock: socket.socket) -> bytes | None:
    """What a readable non-blocking socket holds: ``b""`` when its client closed it or it
    failed, None when nothing was there after all."""
    try:
        return sock.recv(RECV_BYTES)
    except (BlockingIOError, InterruptedError):
        return None
    except OSError:
        return b""


def _raise_open_files_limit() -> None:
    """Every connection costs a file descriptor: take as many as the hard limit allows."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


class ApiWorker(ThreadWorker):
    """gunicorn's threaded worker, reading requests in its main loop (slow clients cost no
    thread), writing answers with a timeout, answering its own errors in the API's shape."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        #: Connections whose request is arriving, and how many per client address.
        self.reading: set[BufferedConn] = set()
        self.reading_from: Counter[str] = Counter()
        #: Connections closing gracefully: when each is closed at the latest.
        self.lingering: dict[BufferedConn, float] = {}
        self.max_head = (self.cfg.limit_request_line + 4 + self.cfg.limit_request_fields
                         * (self.cfg.limit_request_field_size + 2))
        api = load_or_exit().api  # the process's entry point: every section checked
        self.max_body = BUFFERED_BODY_FACTOR * api.max_body_bytes
        self.header_timeout = api.client_header_timeout
        self.body_timeout = api.client_body_timeout
        self.write_timeout = api.client_write_timeout

    def init_process(self) -> None:
        _raise_open_files_limit()
        super().init_process()

    # -- reading requests in the main loop ------------------------------------------------

    def accept(self, listener: socket.socket) -> None:
        try:
            client, address = listener.accept()
        except BlockingIOError:
            return
        except OSError as exc:
            self.log.warning("Could not accept a connection: %s", exc)
            return
        self.nr_conns += 1
        conn = BufferedConn(self.cfg, client, address, listener.getsockname(),
                            linger=self._linger)
        if self.reading_from[conn.address] >= READING_PER_CLIENT:
            self.log.warning("Closed a connection of %s: %d of its requests are arriving "
                             "already", conn.address, READING_PER_CLIENT)
            self.nr_conns -= 1
            util.close(client)
            return
        self.enqueue_req(conn)

    def enqueue_req(self, conn: TConn) -> None:
        """To a thread once the whole request is buffered; until then, to the main loop."""
        if not isinstance(conn, BufferedConn) or self.cfg.is_ssl or conn.whole:
            if isinstance(conn, BufferedConn):
                conn.whole = False
            super().enqueue_req(conn)
            return
        if conn.parser is not None:  # kept alive: what was read past the last request
            conn.pending[:0] = conn.parser.unreader.take_buffered()
        conn.sock.setblocking(False)
        conn.deadline = time.monotonic() + self.header_timeout
        conn.head_arrived, conn.total = False, 0
        self.reading.add(conn)
        self.reading_from[conn.address] += 1
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._readable, conn))
        self._framed(conn)

    def _readable(self, conn: BufferedConn, sock: socket.socket) -> None:
        data = _receive(sock)
        if data is None:
            return
        if not data:  # the client went away
            self._stop_reading(conn)
            self.nr_conns -= 1
            conn.close()
            return
        conn.pending += data
        self._framed(conn)

    def _framed(self, conn: BufferedConn) -> None:
        """Give the connection to a thread if its whole request has arrived (a body of known
        length is waited for without framing the buffer again at each read)."""
        if len(conn.pending) < conn.total:
            return
        framing = frame(bytes(conn.pending), max_head=self.max_head, max_body=self.max_body)
        if framing.complete:
            self._stop_reading(conn)
            conn.whole = conn.data_ready = True
            self.enqueue_req(conn)
            return
        if framing.head_length and not conn.head_arrived:
            conn.head_arrived = True
            conn.deadline = time.monotonic() + self.body_timeout
            if framing.expects_continue:
                conn.pending[:] = without_expect(bytes(conn.pending), framing.head_length)
                self._send_quietly(conn, CONTINUE)
            head = conn.pending.index(HEAD_END) + len(HEAD_END)
            conn.total = request_length(bytes(conn.pending[:head]))

    def _stop_reading(self, conn: BufferedConn) -> None:
        self.reading.discard(conn)
        self.reading_from[conn.address] -= 1
        if self.reading_from[conn.address] <= 0:
            del self.reading_from[conn.address]
        self._unregister(conn)

    def _unregister(self, conn: BufferedConn) -> None:
        with contextlib.suppress(KeyError, ValueError, OSError):
            self.poller.unregister(conn.sock)

    @staticmethod
    def _send_quietly(conn: BufferedConn, data: bytes) -> None:
        """A few bytes to the client, if its socket takes them now (never waits)."""
        with contextlib.suppress(OSError):
            conn.sock.send(data)

    def murder_pending(self) -> None:
        """Also: answer 408 to the requests that did not arrive in time (and, once the worker
        is stopping, close the connections where nothing arrived yet); end lingering closes."""
        super().murder_pending()
        now = time.monotonic()
        for conn in [c for c in self.reading
                     if c.deadline <= now or (not self.alive and not c.pending)]:
            self._stop_reading(conn)
            self.nr_conns -= 1
            if conn.pending:
                self.log.info("Answered 408 to %s: its request did not arrive in time",
                              conn.address)
                self._send_quietly(conn, error_answer(408, "Request Timeout"))
            util.close(conn.sock)
        for conn in [c for c, deadline in self.lingering.items() if deadline <= now]:
            self._end_linger(conn)

    def handle(self, conn: TConn) -> Any:
        """In a thread: the buffered request goes to gunicorn's parser first."""
        if isinstance(conn, BufferedConn) and conn.pending:
            conn.sock.setblocking(True)
            conn.init()
            conn.parser.unreader.unread(bytes(conn.pending))
            conn.pending.clear()
        return super().handle(conn)

    # -- writing answers ------------------------------------------------------------------

    def handle_request(self, req: Any, conn: TConn) -> bool:
        """gunicorn's, with a timeout on each write (and read) of the client's socket."""
        conn.sock.settimeout(self.write_timeout)
        try:
            return super().handle_request(req, conn)
        except TimeoutError:
            self.log.info("Closed the connection of %s: it took nothing of its answer for "
                          "%g s", conn.client, self.write_timeout)
            return False

    def _linger(self, conn: BufferedConn) -> None:
        """Drain what a half-closed connection's client still sends, in the main loop."""
        conn.sock.setblocking(False)
        self.lingering[conn] = time.monotonic() + LINGER_SECONDS
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._drain, conn))

    def _drain(self, conn: BufferedConn, sock: socket.socket) -> None:
        data = _receive(sock)
        if data is None:
            return
        conn.drained += len(data)
        if not data or conn.drained > LINGER_BYTES:
            self._end_linger(conn)

    def _end_linger(self, conn: BufferedConn) -> None:
        self.lingering.pop(conn, None)
        self._unregister(conn)
        util.close(conn.sock)

    # -- gunicorn's own answers -----------------------------------------------------------

    def handle_error(self, req: Any, client: Any, addr: Any, exc: BaseException) -> None:
        captured = _Captured()
        super().handle_error(req, captured, addr, exc)  # status, logs, access log
        match = _STATUS_LINE.match(captured.data)
        if match is None:  # gunicorn wrote nothing we know: let it through unchanged
            util.write_nonblock(client, captured.data)
            return
        status, reason = int(match.group(1)), match.group(2).decode("latin1")
        try:
            util.write_nonblock(client, error_answer(status, reason))
        except Exception:
            self.log.debug("Failed to send error message.")
