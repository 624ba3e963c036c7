"""Download handlers.

Scrapy gives every crawler its own HTTP connection pool and closes it with the crawl. The warm
worker runs one short crawl per job, so every job paid a new TCP (and TLS) handshake even to a
host it fetched a moment ago: ~1 ms on loopback, tens to hundreds of ms on the Internet. Here
one pool serves every crawl of the process. Connections are only ever opened through the
filtering resolver, so reusing them reuses addresses the source policy already allowed.

Scrapy also cancels a body that outgrows ``DOWNLOAD_MAXSIZE`` with a bare cancellation that
does not say why; counting each request's bytes here lets the handler say it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler
from scrapy.exceptions import DownloadCancelledError

from crawler.exceptions import PageTooLarge

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from twisted.web.client import HTTPConnectionPool

#: Request meta key: body bytes received so far.
RECEIVED = "received_bytes"


class HTTPDownloadHandler(HTTP11DownloadHandler):
    """Scrapy's HTTP/1.1 handler with one connection pool per process, kept across crawls,
    and a :class:`PageTooLarge` for bodies over the size limit."""

    _shared_pool: HTTPConnectionPool | None = None

    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        if HTTPDownloadHandler._shared_pool is None:
            HTTPDownloadHandler._shared_pool = self._pool
        self._pool = HTTPDownloadHandler._shared_pool
        self._maxsize = crawler.settings.getint("DOWNLOAD_MAXSIZE")
        crawler.signals.connect(self._count_bytes, signal=signals.bytes_received)

    @staticmethod
    def _count_bytes(data: bytes, request: Request, **_: Any) -> None:
        request.meta[RECEIVED] = request.meta.get(RECEIVED, 0) + len(data)

    async def download_request(self, request: Request) -> Response:
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
