"""Downloader middlewares: source policy on every request, robots.txt shared across crawls."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.httpobj import urlparse_cached

from crawler.exceptions import RobotsDisallowed, SourcePolicyError
from crawler.policy import PolicyRefusal
from crawler.resolver import policy_from_settings

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.robotstxt import RobotParser

    from crawler.policy import SourcePolicy

logger = logging.getLogger(__name__)


class SourcePolicyMiddleware:
    """Refuses, before any connection, what the URL alone shows to be off limits.

    Sees every request, the first and each redirect or meta-refresh hop, and robots.txt. Names
    are checked again, address by address, in :mod:`crawler.resolver`.
    """

    def __init__(self, policy: SourcePolicy):
        self.policy = policy

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SourcePolicyMiddleware:
        return cls(policy_from_settings(crawler.settings))

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        try:
            self.policy.check_url(request.url)
        except PolicyRefusal as refusal:  # as an IgnoreRequest, so Scrapy drops the request
            raise SourcePolicyError(refusal.message, url=refusal.url) from None


#: netloc → (expires at, parser); shared by every crawl in this process.
_robots_cache: dict[str, tuple[float, RobotParser]] = {}


class SharedRobotsTxtMiddleware(RobotsTxtMiddleware):
    """Scrapy's robots.txt middleware (Protego), with parsed files reused across crawls.

    The warm worker builds a new crawler per job; without this cache every job would download
    robots.txt again before its one page. Disallowed URLs raise :class:`RobotsDisallowed`.
    """

    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        self._ttl = crawler.settings.getfloat("ROBOTSTXT_CACHE_TTL", 600)

    async def robot_parser(self, request: Request) -> RobotParser | None:
        parts = urlparse_cached(request)
        key = f"{parts.scheme}://{parts.netloc}"
        cached = _robots_cache.get(key)
        if cached and cached[0] > time.monotonic():
            return cached[1]
        parser = await super().robot_parser(request)
        if parser is not None:
            _robots_cache[key] = (time.monotonic() + self._ttl, parser)
        return parser

    def process_request_2(self, rp: Any, request: Request) -> None:
        try:
            super().process_request_2(rp, request)
        except IgnoreRequest:
            raise RobotsDisallowed(
                "robots.txt of this site disallows the URL for our user agent.", url=request.url
            ) from None


def clear_robots_cache() -> None:
    """Forget every cached robots.txt (tests; an operator's reload)."""
    _robots_cache.clear()
