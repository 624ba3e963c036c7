"""Per-host request slots shared by every crawl of a process (``CRAWLER_HOST_CONCURRENCY``).

Scrapy limits the requests open to one domain per *crawler*, and the warm worker's long-lived
crawler holds every job of the process at once (its per-domain cap raised accordingly), so
without a process-wide count N jobs to one site would open N connections to it.
:class:`HostSlots` is that count, for every crawl of the process: a FIFO semaphore per
``host:port``.

All crawls of a process run on its one reactor thread, so a Twisted ``DeferredSemaphore`` is
enough (no thread locks). A key's semaphore lives only while a request holds or waits for one
of its slots, so a worker that sees millions of hosts keeps entries for the hosts it is
fetching right now, not for every host it ever fetched.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult

from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import defer
from twisted.internet.defer import DeferredSemaphore

DEFAULT_PORTS = {"http": 80, "https": 443}


class NoFreeSlot(Exception):
    """No slot of the host was free within the wait."""


def host_key(url: SplitResult | Any) -> str:
    """``host:port`` of a parsed URL, lower-case and without the scheme (``[v6]:port`` for
    IPv6), the port spelled out: ``http://Example.com/`` and ``http://example.com:80/`` are
    one host, ``https://example.com/`` (port 443) another."""
    host = (url.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    try:
        port = url.port
    except ValueError:  # not a port: the download will fail on its own, count it apart
        return url.netloc.lower()
    return f"{host}:{port or DEFAULT_PORTS.get(url.scheme, 0)}"


@dataclass
class _Host:
    semaphore: DeferredSemaphore
    #: Requests holding or waiting for one of this host's slots.
    users: int = 0


class HostSlots:
    """At most ``limit`` holders per key at once; the others wait in arrival order."""

    def __init__(self, limit: int):
        if limit < 1:
            raise ValueError(f"a host needs at least one slot, not {limit}")
        self.limit = limit
        self._hosts: dict[str, _Host] = {}

    def __len__(self) -> int:
        """Keys with a holder or a waiter now."""
        return len(self._hosts)

    def holders(self, key: str) -> int:
        """Slots of ``key`` held now (for tests and logs)."""
        host = self._hosts.get(key)
        return self.limit - host.semaphore.tokens if host else 0

    @asynccontextmanager
    async def hold(self, key: str, wait: float | None = None) -> AsyncIterator[None]:
        """Hold one of ``key``'s slots for the body of the ``async with``.

        Raises :class:`NoFreeSlot` if none is free within ``wait`` seconds (``None`` or 0: wait
        as long as it takes). However the wait or the body ends (error, cancellation of the
        task), the slot is given back and a waiter that gave up leaves the queue.
        """
        host = self._hosts.get(key)
        if host is None:
            host = self._hosts[key] = _Host(DeferredSemaphore(self.limit))
        host.users += 1
        try:
            await _acquire(host.semaphore, wait)
            try:
                yield
            finally:
                host.semaphore.release()
        finally:
            host.users -= 1
            if not host.users:
                del self._hosts[key]


async def _acquire(semaphore: DeferredSemaphore, wait: float | None) -> None:
    granted: list[bool] = []

    def mark(result: Any) -> Any:
        granted.append(True)
        return result

    waiting = semaphore.acquire().addCallback(mark)
    if wait:
        from twisted.internet import reactor

        waiting.addTimeout(wait, reactor)
    try:
        await maybe_deferred_to_future(waiting)
    except defer.TimeoutError:
        raise NoFreeSlot(f"no slot was free within {wait:g} s") from None
    except BaseException:
        # Cancelled (or failed) after the semaphore had already handed us the slot, in the
        # moment between the grant and this task resuming: hand it on. A waiter cancelled
        # before the grant was taken off the queue by the semaphore's canceller.
        if granted:
            semaphore.release()
        raise
