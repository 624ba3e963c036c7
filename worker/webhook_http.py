"""The HTTP of webhook attempts: a POST to an address the source policy judged, within one
deadline, on a connection kept alive for the receiver's next events.

Why a socket we connect ourselves (and ``http.client`` only to read the answer), rather than
an HTTP client library: the webhook URL is the account's, and must not reach what the crawler
may not (a private address, directly or through DNS that changes between a check and the
connect). Here the name is resolved once per connection, every address is judged by the same
:class:`~core.policy.SourcePolicy` as any fetch, and the connection is made to the address
that was judged; no redirect is followed. The request is written in one piece (head and
body): ``http.client`` would make two writes and build each header through its checks, a
cost paid per page event in the crawling process.

Why :class:`Connections` keeps connections: a crawl's page events are one POST per page, and
a connection each (a connect, a resolver thread, a close, and Nagle's delay on the body without
``TCP_NODELAY``) cost the crawling process more than the POST itself. A connection is reused
only after an answer whose body is small and announced (:data:`KEPT_BODY`, read and dropped),
for at most :data:`KEEP_IDLE` seconds idle; any other answer closes it unread.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import heapq
import http.client
import itertools
import logging
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from standardwebhooks.webhooks import Webhook
from w3lib.url import safe_url_string

from core.policy import PolicyRefusal, SourcePolicy, host_name, literal_address
from storage.webhooks import Claimed

logger = logging.getLogger(__name__)

#: Receivers' names being resolved (:func:`_resolve`), one lookup each, and the most at once.
_LOOKUPS: dict[tuple[str, int], concurrent.futures.Future[list[Any]]] = {}
_LOOKUPS_LOCK = threading.Lock()
MAX_LOOKUPS = 64
#: An answer's body is read (to keep its connection) only when it announces at most this.
KEPT_BODY = 16 * 1024
#: Seconds a connection may wait idle and still be reused (below common servers' keep-alive
#: timeouts, e.g. gunicorn's 2 s, so it is rarely closed under us).
KEEP_IDLE = 1.5
#: Idle connections kept at most, all receivers together.
MAX_IDLE = 32
#: URLs whose :class:`_Aim` is remembered at most.
MAX_AIMS = 1000

_Key = tuple[str, str, int]  # scheme, host, port
USER_AGENT = "webdata-webhooks/1"


@dataclass(frozen=True)
class _Aim:
    """Where a webhook URL's requests go, once the policy judged it from the URL alone."""

    key: _Key
    host: str  #: the ``Host`` header
    target: str  #: the path and query as sent: percent-encoded


def _aim(url: str, policy: SourcePolicy) -> _Aim:
    """``url`` judged by the policy (raises PolicyRefusal) and taken apart."""
    policy.check_url(url)
    parts = urlsplit(url)
    https = parts.scheme.lower() == "https"
    raw_host = parts.hostname or ""
    # the name as the policy judged it (IDNA 2008), not as getaddrinfo would encode it
    host = raw_host if literal_address(raw_host) else host_name(raw_host)
    port = parts.port or (443 if https else 80)
    shown = f"[{host}]" if ":" in host else host
    wire = urlsplit(safe_url_string(url))
    return _Aim(("https" if https else "http", host, port),
                shown if port == (443 if https else 80) else f"{shown}:{port}",
                (wire.path or "/") + (f"?{wire.query}" if wire.query else ""))


class Connections:
    """Connections kept alive between attempts, by receiver (scheme, host, port); each is used
    by one attempt at a time. Thread-safe; :meth:`close` ends the idle ones. Also each URL's
    :class:`_Aim` (the policy's judgement from the URL alone does not change)."""

    def __init__(self) -> None:
        self._idle: dict[_Key, list[tuple[float, socket.socket]]] = {}
        self._aims: dict[tuple[str, int], _Aim] = {}
        self._lock = threading.Lock()

    def aim(self, url: str, policy: SourcePolicy) -> _Aim:
        """:func:`_aim`, remembered (a refusal is not: it raises each time)."""
        known = self._aims.get((url, id(policy)))
        if known is None:
            known = _aim(url, policy)
            with self._lock:
                if len(self._aims) >= MAX_AIMS:
                    self._aims.clear()
                self._aims[(url, id(policy))] = known
        return known

    def take(self, key: _Key) -> socket.socket | None:
        """An idle connection to ``key`` used less than :data:`KEEP_IDLE` s ago, or None."""
        stale = []
        found = None
        with self._lock:
            kept = self._idle.get(key, [])
            while kept:
                used, sock = kept.pop()
                if time.monotonic() - used < KEEP_IDLE:
                    found = sock
                    break
                stale.append(sock)
        for sock in stale:
            sock.close()
        return found

    def give_back(self, key: _Key, sock: socket.socket) -> None:
        """Keep ``sock`` for the next attempt to ``key`` (closed when too many are)."""
        with self._lock:
            if sum(len(kept) for kept in self._idle.values()) < MAX_IDLE:
                self._idle.setdefault(key, []).append((time.monotonic(), sock))
                return
        sock.close()

    def close(self) -> None:
        """Close every idle connection."""
        with self._lock:
            idle, self._idle = self._idle, {}
        for kept in idle.values():
            for _, sock in kept:
                sock.close()


class _Watchdog:
    """One thread for every attempt's deadline: past it, the attempt's socket is shut, which
    wakes whatever read, write or handshake waits on it (a receiver that drips its answer a
    byte at a time is held to the whole attempt's time, not each read's)."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, list[Any]]] = []
        self._order = itertools.count()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def watch(self, sock: socket.socket, deadline: float) -> list[Any]:
        """Shut ``sock`` at ``deadline`` unless the handle returned is ended first
        (:meth:`end`); ``handle[1]`` says whether it was cut."""
        handle: list[Any] = [sock, False, True]  # socket, cut, live
        with self._wake:
            heapq.heappush(self._heap, (deadline, next(self._order), handle))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name="webhook-deadlines")
                self._thread.start()
            elif self._heap[0][2] is handle:
                self._wake.notify()
        return handle

    def end(self, handle: list[Any]) -> bool:
        """Stop watching; whether the deadline had cut the socket."""
        with self._wake:
            handle[2] = False
            return bool(handle[1])

    def _run(self) -> None:
        with self._wake:
            while True:
                while self._heap and not self._heap[0][2][2]:
                    heapq.heappop(self._heap)
                if not self._heap:
                    self._wake.wait(60)
                    if not self._heap:
                        self._thread = None
                        return
                    continue
                deadline, _, handle = self._heap[0]
                left = deadline - time.monotonic()
                if left > 0:
                    self._wake.wait(left)
                    continue
                heapq.heappop(self._heap)
                handle[1] = True
                with contextlib.suppress(OSError):
                    handle[0].shutdown(socket.SHUT_RDWR)


_WATCHDOG = _Watchdog()
#: What a connection that sat idle fails with when the receiver closed it meanwhile.
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
          ConnectionAbortedError)


def attempt(claimed: Claimed, policy: SourcePolicy, timeout: float,
            connections: Connections | None = None) -> tuple[int | None, str | None]:
    """POST the event (on a kept connection of ``connections`` when one is idle); (HTTP
    status, None) when an answer came, else (None, why not)."""
    headers = signed_headers(claimed.id, claimed.payload, claimed.secrets,
                             datetime.now(UTC))
    try:
        return post(claimed.url, claimed.payload.encode(), headers, policy, timeout,
                    connections), None
    except PolicyRefusal as exc:
        return None, exc.message
    except Exception as exc:  # a bug too costs this event an attempt, never the sweep of all
        if not isinstance(exc, OSError | http.client.HTTPException):
            logger.exception("Webhook %s: the attempt failed unexpectedly", claimed.id)
        return None, f"{type(exc).__name__}: {exc}"[:300]


def signed_headers(event_id: str, payload: str, secrets: tuple[str, ...], now: datetime
                   ) -> dict[str, str]:
    """The headers of one attempt: Standard Webhooks' three (one ``v1,`` signature per
    secret, space-separated) and the content type."""
    return {
        "Content-Type": "application/json", "User-Agent": USER_AGENT,
        "webhook-id": event_id, "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": " ".join(Webhook(secret).sign(event_id, now, payload)
                                      for secret in secrets),
    }


def post(url: str, body: bytes, headers: dict[str, str], policy: SourcePolicy,
         timeout: float, connections: Connections | None = None) -> int:
    """POST ``body`` to ``url`` within ``timeout`` s and return the status, connecting only
    to an address the policy allows, on a connection of ``connections`` when one is idle
    (once more on a new one if the receiver had closed it); raises PolicyRefusal, OSError
    or HTTPException."""
    aim = connections.aim(url, policy) if connections is not None else _aim(url, policy)
    request = _request(aim, body, headers)
    deadline = time.monotonic() + timeout
    kept = connections.take(aim.key) if connections is not None else None
    if kept is not None:
        try:
            return _exchange(kept, aim.key, request, deadline, timeout, connections)
        except _STALE:
            pass  # closed by the receiver while idle: this attempt on a new connection
    sock = _open(aim.key, policy, deadline, timeout)
    return _exchange(sock, aim.key, request, deadline, timeout, connections)


def _request(aim: _Aim, body: bytes, headers: dict[str, str]) -> bytes:
    """The request's bytes, head and body together (one write, one packet when small)."""
    lines = [f"POST {aim.target} HTTP/1.1", f"Host: {aim.host}",
             f"Content-Length: {len(body)}", "Accept-Encoding: identity",
             *(f"{name}: {value}" for name, value in headers.items())]
    if any(mark in line for line in lines for mark in "\r\n\0"):
        raise http.client.InvalidURL("A webhook header holds a line break.")
    try:
        return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii") + body
    except UnicodeEncodeError:
        raise http.client.InvalidURL("A webhook header is not ASCII.") from None


def _open(key: _Key, policy: SourcePolicy, deadline: float, timeout: float
          ) -> socket.socket:
    """A new connection to ``key`` (TLS for https), made before ``deadline``."""
    scheme, host, port = key
    sock = _connect(host, port, policy, deadline)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # the body is not held back
    handle = _WATCHDOG.watch(sock, deadline)
    try:
        if scheme == "https":
            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=host)
    except (OSError, ValueError) as exc:
        sock.close()
        if _WATCHDOG.end(handle):
            raise TimeoutError(f"timed out: no answer within {timeout:g} s") from exc
        raise
    _WATCHDOG.end(handle)
    return sock


def _exchange(sock: socket.socket, key: _Key, request: bytes, deadline: float,
              timeout: float, connections: Connections | None) -> int:
    """Send ``request`` on ``sock`` and return its answer's status; the connection goes back
    to ``connections`` when the answer leaves it reusable and is closed otherwise."""
    sock.settimeout(max(0.001, deadline - time.monotonic()))
    handle = _WATCHDOG.watch(sock, deadline)
    keep = False
    try:
        sock.sendall(request)
        response = http.client.HTTPResponse(sock, method="POST")  # type: ignore[arg-type]
        try:
            response.begin()
            if (connections is not None and not response.will_close
                    and response.length is not None and response.length <= KEPT_BODY):
                response.read()
                keep = True
            return response.status
        finally:
            response.close()
    except (OSError, http.client.HTTPException) as exc:
        if _WATCHDOG.end(handle):
            raise TimeoutError(f"timed out: no answer within {timeout:g} s") from exc
        raise
    finally:
        cut = _WATCHDOG.end(handle)
        if keep and not cut and connections is not None:
            connections.give_back(key, sock)
        else:
            sock.close()


def _resolve(host: str, port: int, deadline: float) -> list[Any]:
    """``getaddrinfo`` within the attempt's deadline.

    The system resolver takes no timeout, so the lookup runs on a thread of its own (a
    daemon: it ends when the resolver gives up, and never holds the process up); past the
    deadline the attempt fails (TimeoutError) and the lookup goes on without it. Attempts
    for one name share one lookup, so a receiver whose DNS never answers holds one thread
    however many of its events are due, and other receivers' attempts never wait behind it;
    at most :data:`MAX_LOOKUPS` names are looked up at once."""
    key = (host, port)
    with _LOOKUPS_LOCK:
        lookup = _LOOKUPS.get(key)
        if lookup is None:
            if len(_LOOKUPS) >= MAX_LOOKUPS:
                raise TimeoutError(f"timed out resolving {host}: too many names resolving")
            lookup = _LOOKUPS[key] = concurrent.futures.Future()
            threading.Thread(target=_look_up, args=(key, lookup), daemon=True,
                             name=f"webhook-resolver {host}").start()
    try:
        return lookup.result(timeout=max(0.0, deadline - time.monotonic()))
    except concurrent.futures.TimeoutError:
        raise TimeoutError(f"timed out resolving {host}") from None


def _look_up(key: tuple[str, int], lookup: concurrent.futures.Future[list[Any]]) -> None:
    try:
        lookup.set_result(socket.getaddrinfo(*key, type=socket.SOCK_STREAM))
    except BaseException as exc:  # handed to every attempt waiting on it (gaierror…)
        lookup.set_exception(exc)
    finally:
        with _LOOKUPS_LOCK:
            _LOOKUPS.pop(key, None)


def _connect(host: str, port: int, policy: SourcePolicy, deadline: float) -> socket.socket:
    """A socket connected, before ``deadline``, to the first of ``host``'s addresses the
    policy allows."""
    refusals: list[str] = []
    failure: OSError | None = None
    for family, kind, proto, _, address in _resolve(host, port, deadline):
        reason = policy.address_refusal(str(address[0]), port)
        if reason is not None:
            refusals.append(reason)
            continue
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError(f"timed out connecting to {host}")
        sock = socket.socket(family, kind, proto)
        sock.settimeout(remaining)
        try:
            sock.connect(address)
        except OSError as exc:
            sock.close()
            failure = exc
            continue
        return sock
    if failure is not None:
        raise failure
    raise PolicyRefusal(f"Refused by source policy: {refusals[0] if refusals else host}.")
