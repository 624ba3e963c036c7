"""``scrapy crawl site -a url=…``: a crawl of one site, as ``POST /collections`` (``mode:
crawl``) runs it, without the API::

    scrapy crawl site -a url=https://example.com/ -a max_pages=50 -a max_depth=3 \\
        -a extract=contacts -a include_paths='^/docs/' -a exclude_paths='\\?print=' \\
        -a use_sitemap=true -O out.jsonl

The rules are the collection's, from the same functions (docs/api.md, Collections): the crawl
stays on the start URL's site and within ``max_depth`` link hops (sitemap URLs are depth 1),
``include_paths``/``exclude_paths`` match the path + query (:class:`~core.scope.CrawlScope`);
a URL is admitted once by its canonical form and only while ``max_pages`` lasts; a page whose
final URL or ``rel=canonical`` an earlier page claimed is a duplicate, not output, and gives
its slot to the next URL waiting (the collections' own :class:`~collecting.frontier.Frontier`:
:mod:`crawler.spiders.multipage`); robots.txt and the source policy apply to every request: a
link they refuse is skipped and takes no place of ``max_pages`` (a refused start URL is a
failed result, ``robots_disallowed`` or ``source_policy``). The start URL is always tried
first, and is always the first result.

As in a collection, the start URL and the sitemaps' URLs are admitted before any link: the
start page and the sitemaps are fetched together, and the links the start page has wait until
the sitemaps are read (when the crawl first goes idle). Without that, a small ``max_pages``
would go to whichever arrived first.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.exceptions import DontCloseSpider

from collecting.frontier import Entry, links_followed, page_addresses
from core.contract import DEFAULT_MAX_DEPTH, FETCH_REFUSALS, PageStatus
from core.controls import escaped
from core.patterns import pattern_errors
from core.scope import CrawlScope
from crawler.admission import known_refusals
from crawler.spiders.base import as_bool, as_http_url, as_whole_number
from crawler.spiders.collected import CollectedPage
from crawler.spiders.multipage import MultiPageSpider, Output
from crawler.spiders.sitemap import SitemapReading, sitemap_budget

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

def as_patterns(spider: str, name: str, value: Any) -> tuple[str, ...]:
    """``-a include_paths=…`` as patterns: one regex, or a JSON list of them
    (``'["^/docs/", "^/blog/"]'``); from Python, any list of them. Not comma-separated: regexes
    have commas (``a{1,3}``). A bad pattern is a ``ValueError`` naming it
    (:func:`~core.patterns.pattern_errors`, the API's check: RE2's syntax)."""
    if value is None or value == "":
        patterns: list[Any] = []
    elif isinstance(value, str):
        patterns = _json_list(value) or [value]
    else:
        patterns = list(value)
    errors = pattern_errors(patterns)
    if errors:
        raise ValueError(f"{spider}: {name}: " + "; ".join(
            f"{patterns[index]!r}: {message}" for index, message in errors.items()))
    return tuple(patterns)


def _json_list(value: str) -> list[str] | None:
    """``value`` as a JSON list of strings, or None (a regex such as ``[0-9]+$`` is one
    pattern, not JSON)."""
    try:
        found = json.loads(value)
    except json.JSONDecodeError:
        return None
    if isinstance(found, list) and all(isinstance(item, str) for item in found):
        return found
    return None


class SiteSpider(MultiPageSpider, SitemapReading):
    """Pages of the site of ``url``, following links (see the module).

    Options: ``max_pages`` (default: no limit but the depth), ``max_depth`` (default 3),
    ``include_paths``, ``exclude_paths`` (a regex, or a JSON list), ``use_sitemap`` (default
    true), ``extract`` (``page``, ``contacts`` or ``products``).
    """

    name = "site"

    def __init__(self, url: str | None = None, max_pages: Any = None,
                 max_depth: Any = DEFAULT_MAX_DEPTH, include_paths: Any = None,
                 exclude_paths: Any = None, use_sitemap: Any = True, extract: str = "page",
                 *args: Any, **kwargs: Any):
        super().__init__(*args, extract=extract, **kwargs)
        site = as_http_url(self.name, url, "the start page")
        self.url = url.strip() if url else site
        self.max_pages = (0 if max_pages in (None, "")
                          else as_whole_number(self.name, "max_pages", max_pages, minimum=1))
        self.max_depth = as_whole_number(self.name, "max_depth", max_depth)
        self.scope = CrawlScope(
            start_url=self.url, max_depth=self.max_depth,
            include_paths=as_patterns(self.name, "include_paths", include_paths),
            exclude_paths=as_patterns(self.name, "exclude_paths", exclude_paths))
        self.use_sitemap = as_bool(use_sitemap) and self.max_depth >= 1
        self.stored = 0
        self._seeded = False
        self._sitemap_pages: list[str] = []
        self._waiting: list[Entry] = []  # links found before the sitemaps were read
        if self.use_sitemap:
            self.read_sitemaps_of(site, sitemap_budget(self.max_pages))

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> SiteSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider._seed, signal=signals.spider_idle)
        return spider

    async def start(self) -> AsyncIterator[Request]:
        self.open_frontier().admit([Entry.of(self.url, 0)], self.max_pages)
        for request in self._requests():
            yield request
        if self.use_sitemap:
            for request in self.sitemap_start():
                yield request

    def sitemap_page(self, url: str) -> Iterable[Any]:
        self._sitemap_pages.append(url)
        return ()

    def collected(self, entry: Entry, page: CollectedPage) -> Iterator[Output]:
        result = page.result
        if result.status == PageStatus.SUCCEEDED:
            owner = self.frontier.claim(entry, page_addresses(result.final_url, page.canonical))
            if owner is not None:
                logger.debug("%s is a duplicate of %s", escaped(entry.url), escaped(owner))
                yield from self._requests()  # the next URL waiting, in its slot
                return
        elif entry.depth and FETCH_REFUSALS.get((result.error or {}).get("error")):
            logger.debug("%s skipped: %s", escaped(entry.url), result.error)
            self.frontier.release_slot()
            yield from self._requests()
            return
        self.stored += 1
        yield result
        links = links_followed(self.scope, page.links, entry.depth + 1, page.refusals)
        if self._seeded:
            self.frontier.admit(links, self.max_pages)
            yield from self._requests()
        else:
            self._waiting += links

    def _requests(self) -> Iterator[Request]:
        for entry in self.frontier.take():
            yield self.page_request(entry, follow=True)

    def _seed(self) -> None:
        """The first time the crawl goes idle, the start page and the sitemaps are read:
        admit the sitemap URLs (depth 1), then the start page's links, as a collection does."""
        if self._seeded:
            return
        self._seeded = True
        self.frontier.admit(links_followed(self.scope, self._sitemap_pages, 1, known_refusals(
            self.url, self.crawler.settings)), self.max_pages)
        self.frontier.admit(self._waiting, self.max_pages)
        self._sitemap_pages, self._waiting = [], []
        requests = list(self._requests())
        for request in requests:
            self.crawler.engine.crawl(request)
        if requests:
            raise DontCloseSpider

    def closed(self, reason: str) -> None:
        duplicates = self.frontier.state().duplicates if self.frontier is not None else 0
        logger.info("Site crawl of %s: %d pages, %d duplicates (%s)", escaped(self.url),
                    self.stored, duplicates, reason)
        super().closed(reason)
