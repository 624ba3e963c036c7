"""Download handlers.

Scrapy gives every crawler its own HTTP connection pool and closes it with the crawl. The warm
worker's crawls (its long-lived crawler, and any spider that needs a crawl of its own) all
share one pool here, so a job does not pay a new TCP (and TLS) handshake to a host the process
fetched a moment ago: ~1 ms on loopback, tens to hundreds of ms on the Internet. Connections
are only ever opened through the filtering resolver, so reusing them reuses addresses the
source policy already allowed.

Politeness across jobs: the warm worker has many jobs in flight, and Scrapy's per-domain cap
would not hold them back (it is raised for the long-lived crawler, and per crawler anyway).
So every download here first takes one of the process's ``HOST_CONCURRENCY`` slots for its
``host:port`` (:mod:`crawler.host_slots`) and gives it back when the download ends, however
it ends. Requests to other hosts never wait on a full one. A request waits for a slot at most
its download timeout (then it fails as a timeout, as a download that slow would). robots.txt
is fetched without a slot: behind a busy host's pages its fetch would time out, and a missing
robots.txt allows everything.

A request nobody waits for any more (its crawl stopped, its fed job answered or given up on)
is not downloaded, whether it was still queued or waiting for a slot; and a job given up on
cancels its downloads in progress (:data:`crawler.signals.crawl_abandoned`), freeing their
connections and slots at once.

Scrapy also cancels a body that outgrows ``DOWNLOAD_MAXSIZE`` with a bare cancellation that
does not say why; counting each request's bytes here lets the handler say it.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler
from scrapy.exceptions import DownloadCancelledError, IgnoreRequest
from scrapy.utils.httpobj import urlparse_cached

from crawler.exceptions import CrawlTimeout, PageTooLarge
from crawler.host_slots import HostSlots, NoFreeSlot, host_key
from crawler.signals import JOB_CLOSED, JOB_KEY, crawl_abandoned

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from twisted.web.client import HTTPConnectionPool

#: Request meta key: body bytes received so far.
RECEIVED = "received_bytes"


class HTTPDownloadHandler(HTTP11DownloadHandler):
    """Scrapy's HTTP/1.1 handler with one connection pool per process, kept across crawls,
    at most ``HOST_CONCURRENCY`` requests open to one host across those crawls, and a
    :class:`PageTooLarge` for bodies over the size limit."""

    _shared_pool: HTTPConnectionPool | None = None
    _host_slots: HostSlots | None = None

    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        settings = crawler.settings
        if HTTPDownloadHandler._shared_pool is None:
            HTTPDownloadHandler._shared_pool = self._pool
            HTTPDownloadHandler._host_slots = HostSlots(settings.getint("HOST_CONCURRENCY", 16))
            # Keep as many idle connections to a host as may be busy at once, so the next
            # wave of jobs to it reuses them instead of opening new ones.
            self._pool.maxPersistentPerHost = max(
                self._pool.maxPersistentPerHost, HTTPDownloadHandler._host_slots.limit
            )
        self._pool = HTTPDownloadHandler._shared_pool
        assert HTTPDownloadHandler._host_slots is not None
        self._slots = HTTPDownloadHandler._host_slots
        self._maxsize = crawler.settings.getint("DOWNLOAD_MAXSIZE")
        self._timeout = crawler.settings.getfloat("DOWNLOAD_TIMEOUT")
        crawler.signals.connect(self._count_bytes, signal=signals.bytes_received)
        #: Downloads in progress (or waiting for a host slot), with the fed job of each.
        self._in_flight: dict[asyncio.Future[Response], Any] = {}
        crawler.signals.connect(self._abandon, signal=crawl_abandoned)

    @staticmethod
    def _count_bytes(data: bytes, request: Request, **_: Any) -> None:
        request.meta[RECEIVED] = request.meta.get(RECEIVED, 0) + len(data)

    async def download_request(self, request: Request) -> Response:
        """The download, in a task of its own that :meth:`_abandon` can cancel."""
        task = asyncio.ensure_future(self._fetch(request))
        self._in_flight[task] = request.meta.get(JOB_KEY)
        try:
            return await task
        except asyncio.CancelledError:
            if not task.cancelled():
                raise  # this coroutine itself was cancelled, not by us
            raise IgnoreRequest("The crawl was stopped before the download ended.") from None
        finally:
            self._in_flight.pop(task, None)

    def _abandon(self, job: Any = None) -> None:
        """Cancel every download (or wait for a host slot) of this crawler, or only those of
        one fed ``job`` (:mod:`crawler.feed`)."""
        for task, owner in list(self._in_flight.items()):
            if job is None or owner == job:
                task.cancel()

    async def _fetch(self, request: Request) -> Response:
        self._check_wanted(request)
        url = urlparse_cached(request)
        if url.path == "/robots.txt" and request.meta.get("dont_obey_robotstxt"):
            # Never behind the host's pages: a robots.txt fetch that timed out waiting for a
            # slot would count as "no robots.txt", every page allowed. One per site and TTL.
            return await self._download(request)
        wait = request.meta.get("download_timeout", self._timeout)
        try:
            async with self._slots.hold(host_key(url), wait):
                self._check_wanted(request)
                return await self._download(request)
        except NoFreeSlot:
            raise CrawlTimeout(
                f"The host was busy: no connection to it was free within {wait:g} s (this "
                f"worker already had as many requests to it open as it allows).", url=request.url
            ) from None

    def _check_wanted(self, request: Request) -> None:
        """IgnoreRequest if nobody waits for ``request`` any more: its crawl stopped, or its
        fed job is over (:mod:`crawler.feed`)."""
        if not self._crawler.crawling or request.meta.get(JOB_CLOSED):
            raise IgnoreRequest("Nobody waits for this page any more: its job is over.")

    async def _download(self, request: Request) -> Response:
        try:
            return await super().download_request(request)
        except DownloadCancelledError:
            limit = request.meta.get("download_maxsize", self._maxsize)
            if limit and request.meta.get(RECEIVED, 0) > limit:
                raise PageTooLarge(
                    "The page is larger than the size limit.", url=request.url
                ) from None
            raise

    async def close(self) -> None:
        """The pool outlives the crawl; its idle connections time out on their own."""
