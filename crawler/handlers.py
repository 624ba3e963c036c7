"""Download handlers.

Scrapy gives every crawler its own HTTP connection pool and closes it with the crawl. The warm
worker runs one short crawl per job, so every job paid a new TCP (and TLS) handshake even to a
host it fetched a moment ago: ~1 ms on loopback, tens to hundreds of ms on the Internet. Here
one pool serves every crawl of the process. Connections are only ever opened through the
filtering resolver, so reusing them reuses addresses the source policy already allowed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from twisted.web.client import HTTPConnectionPool


class SharedPoolHTTPDownloadHandler(HTTP11DownloadHandler):
    """Scrapy's HTTP/1.1 handler with one connection pool per process, kept across crawls."""

    _shared_pool: HTTPConnectionPool | None = None

    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        if SharedPoolHTTPDownloadHandler._shared_pool is None:
            SharedPoolHTTPDownloadHandler._shared_pool = self._pool
        self._pool = SharedPoolHTTPDownloadHandler._shared_pool

    async def close(self) -> None:
        """The pool outlives the crawl; its idle connections time out on their own."""
