"""Downloader middlewares: source policy on every request, robots.txt shared across crawls."""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.exceptions import IgnoreRequest
from scrapy.robotstxt import ProtegoRobotParser
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import Deferred

from core.canonical import same_site
from core.policy import PolicyRefusal
from core.scope import CRAWL_SITE
from crawler.exceptions import OffSiteRedirect, RobotsDisallowed, SourcePolicyError
from crawler.resolver import policy_from_settings

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.robotstxt import RobotParser

    from core.policy import SourcePolicy

logger = logging.getLogger(__name__)

#: The statuses Scrapy's RedirectMiddleware follows (with a Location).
REDIRECT_STATUSES = (301, 302, 303, 307, 308)


class SourcePolicyMiddleware:
    """Refuses, before any connection, what the URL alone shows to be off limits.

    Sees every request, the first and each redirect or meta-refresh hop, and robots.txt. Names
    are checked again, address by address, in :mod:`crawler.resolver`. A crawl's page (one
    with :data:`~core.scope.CRAWL_SITE`) may not hop off the crawl's site either.
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
        site = request.meta.get(CRAWL_SITE)
        if site and not same_site(request.url, site):  # a crawl's page, moved to another site
            first = (request.meta.get("redirect_urls") or [request.url])[0]
            raise OffSiteRedirect(
                f"The page redirects to another site ({request.url}), outside this crawl: "
                f"nothing was fetched there.", url=first)

    def process_response(self, request: Request, response: Response,
                         spider: Spider | None = None) -> Response:
        """A redirect to a scheme Scrapy does not follow (``file:``, ``gopher:``…) is refused
        here: Scrapy would hand the 3xx on, and the client would read "the target answered
        302" instead of what happened. Redirects it follows come back through
        :meth:`process_request`."""
        location = response.headers.get(b"Location")
        if response.status not in REDIRECT_STATUSES or not location:
            return response
        target = urljoin(request.url, location.decode("latin1").strip())
        if urlsplit(target).scheme.lower() in ("http", "https"):
            return response
        try:
            self.policy.check_url(target)
        except PolicyRefusal as refusal:
            raise SourcePolicyError(f"Redirected to a URL that is not fetched. {refusal.message}",
                                    url=request.url) from None
        return response


#: Sites whose parsed robots.txt a worker process keeps; the least recently used goes first.
#: A parsed file is a few KiB, so this bounds the cache to a few MiB whatever is crawled.
ROBOTS_CACHE_SIZE = 1024



class RobotsCache:
    """Parsed robots.txt files by site (``scheme://netloc``), each until it expires, at most
    ``size`` of them: reading or storing a site makes it the most recently used, and storing
    past ``size`` forgets the least recently used. Thread-safe: the reactor stores, and a
    collection's slice reads before admitting links (:mod:`crawler.admission`)."""

    def __init__(self, size: int = ROBOTS_CACHE_SIZE):
        self.size = size
        self._entries: OrderedDict[str, tuple[float, RobotParser]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, site: str) -> RobotParser | None:
        with self._lock:
            entry = self._entries.get(site)
            if entry is None or entry[0] <= time.monotonic():
                return None
            self._entries.move_to_end(site)
            return entry[1]

    def put(self, site: str, parser: RobotParser, ttl: float) -> None:
        with self._lock:
            self._entries[site] = (time.monotonic() + ttl, parser)
            self._entries.move_to_end(site)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)


#: Shared by every crawl in this process.
_robots_cache = RobotsCache()


def cached_robots(url: str) -> RobotParser | None:
    """The parsed robots.txt of ``url``'s site (``scheme://netloc``), when this process has it
    (it has, once a page of the site went through the middleware below, until it expires);
    None otherwise. From any thread: a parser is only read once parsed."""
    return _robots_cache.get(robots_site(url))


def robots_site(url: str) -> str:
    """What one robots.txt covers, and what the cache keeps it by: ``scheme://netloc``."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def crawl_delay_of(parser: RobotParser | None, user_agent: str) -> float | None:
    """The ``Crawl-delay`` ``parser``'s file sets for ``user_agent``; None when it sets none
    (or there is no file)."""
    delay_of = getattr(parser, "crawl_delay", None)
    if delay_of is None:
        return None
    try:
        return delay_of(user_agent)
    except Exception:  # a parser of another kind, or an odd file: no delay known
        return None


def unreachable(status: int) -> bool:
    """Whether a robots.txt answered ``status`` leaves its site "unreachable" (RFC 9309,
    2.3.1.4: the crawler must assume complete disallow): a server error, and 429, which asks
    for less, not for no rules. A 4xx means there are none: everything is allowed."""
    return status >= 500 or status == 429


#: Seconds an unreachable robots.txt keeps its site closed before it is asked for again.
UNREACHABLE_TTL = 60.0
#: What :class:`RobotsParser` is handed for an unreachable robots.txt: this, then the status.
_UNREACHABLE = b"#webdata-unreachable "


class RobotsParser(ProtegoRobotParser):
    """Scrapy's Protego parser (``ROBOTSTXT_PARSER``), and for an unreachable robots.txt a
    parser that allows nothing and says why (``unreachable``: the status it answered)."""

    unreachable: int | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler, robotstxt_body: bytes) -> RobotsParser:
        if not robotstxt_body.startswith(_UNREACHABLE):
            return super().from_crawler(crawler, robotstxt_body)
        parser = super().from_crawler(crawler, b"User-agent: *\nDisallow: /\n")
        parser.unreachable = int(robotstxt_body.removeprefix(_UNREACHABLE))
        return parser


class SharedRobotsTxtMiddleware(RobotsTxtMiddleware):
    """Scrapy's robots.txt middleware (Protego), with parsed files reused across crawls.

    A spider with a crawl of its own (``scrapy crawl``, or a job whose spider needs its own
    settings) would download robots.txt again before its one page; and the worker's long-lived
    crawler would keep every site's file forever. Here parsed files live in one bounded,
    expiring cache per process. Disallowed URLs raise :class:`RobotsDisallowed`.
    """

    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        self._ttl = crawler.settings.getfloat("ROBOTSTXT_CACHE_TTL", 600)

    async def robot_parser(self, request: Request) -> RobotParser | None:
        parts = urlparse_cached(request)
        site = f"{parts.scheme}://{parts.netloc}"
        cached = _robots_cache.get(site)
        if cached is not None:
            return cached
        pending = self._parsers.get(parts.netloc)
        if isinstance(pending, Deferred):  # another request is fetching this robots.txt
            return await maybe_deferred_to_future(_branch(pending))
        parser = await super().robot_parser(request)
        if parser is not None:
            closed = getattr(parser, "unreachable", None)
            ttl = min(self._ttl, UNREACHABLE_TTL) if closed else self._ttl
            _robots_cache.put(site, parser, ttl)
        # Scrapy keeps every site's parser (or None after an error) for its crawler's life:
        # right for one crawl, but the worker's crawler lives for days (crawler.feed), so that
        # would grow without bound and never see a robots.txt change. The shared cache above
        # keeps parsers; Scrapy's entry only joins requests to one fetch while it is pending.
        if not isinstance(self._parsers.get(parts.netloc), Deferred):
            self._parsers.pop(parts.netloc, None)
        return parser

    async def _parse_robots(self, response: Response, netloc: str, request: Request) -> None:
        """Scrapy reads any answer's body as the rules: a server's error page allowed every
        page of a site whose robots.txt failed. An unreachable one (:func:`unreachable`)
        becomes a parser that allows nothing, for :data:`UNREACHABLE_TTL` seconds."""
        if unreachable(response.status):
            response = response.replace(body=_UNREACHABLE + str(response.status).encode())
        await super()._parse_robots(response, netloc, request)

    def process_request_2(self, rp: Any, request: Request) -> None:
        try:
            super().process_request_2(rp, request)
        except IgnoreRequest:
            status = getattr(rp, "unreachable", None)
            raise RobotsDisallowed(
                f"robots.txt of this site could not be read (it answered {status}): a site "
                f"whose robots.txt fails is not crawled until it answers again."
                if status else "robots.txt of this site disallows the URL for our user agent.",
                url=request.url) from None


def _branch(deferred: Deferred[Any]) -> Deferred[Any]:
    """A Deferred fired with ``deferred``'s result, which stays in place for the next waiter.

    Scrapy 2.19's middleware makes every request that waits for a robots.txt being fetched
    await the one shared Deferred (``asFuture``), whose callback passes ``None`` on: of three
    or more requests waiting for one site's robots.txt, all but the first read "no robots.txt"
    and were fetched even where disallowed (a batch of URLs of one site starts that way).
    """
    branch: Deferred[Any] = Deferred()

    def forward(result: Any) -> Any:
        branch.callback(result)
        return result

    deferred.addCallback(forward)
    return branch

