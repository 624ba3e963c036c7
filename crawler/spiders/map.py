"""``scrapy crawl map -a url=…``: the URLs of a site (``POST /map``), listed, not extracted.

Sources, each fetched as any page is (source policy, robots.txt, the per-host slots):

- the start page (``url``): its failure is the map's (as for ``/scrape``); its links, and the
  RSS/Atom feeds it names with ``<link rel="alternate">`` (at most :data:`MAX_FEEDS`, read
  with lxml, at most :data:`MAX_FEED_ENTRIES` entries each);
- ``discover_links`` hops: at most :data:`PAGES_PER_HOP` same-site pages a hop, the first in
  document order the map's path rules admit, fetched only for their links;
- sitemaps (:class:`~crawler.spiders.sitemap.SitemapReading`'s Scrapy utilities): robots.txt
  ``Sitemap:`` lines, else ``/sitemap.xml`` and ``/sitemap_index.xml``; indexes followed to
  depth :data:`MAX_SITEMAP_DEPTH`, each sitemap read once (an index naming itself is read
  once); gzip files decompressed up to :data:`SITEMAP_MAX_BYTES` (more: the file gives
  nothing), plain ones downloaded up to that size; text sitemaps (one URL a line) too;
  malformed XML gives what parses. The protocol's host rules: an index names sitemaps of its
  own site (others are never fetched); a sitemap names URLs of its own site, unless robots.txt
  of the start site named it (or an index it named).

``sitemap``: ``only`` reads sitemaps alone (the start page is still fetched, for the answer's
``final_url`` and ``status_code``), ``skip`` none. At most :data:`MAX_LOCS` sitemap entries are
read in all; then reading stops (``truncated``).

The deadline: 80 % of ``CRAWL_TIMEOUT``. No request may outlast it (each one's
``download_timeout`` is the time left), and the first callback after it answers with what was
found (``truncated``): a slow sitemap costs its wait, never the map.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urljoin, urlsplit, urlunsplit

from lxml import etree
from scrapy import Request
from scrapy.http import HtmlResponse, TextResponse
from scrapy.utils.sitemap import Sitemap, sitemap_urls_from_robots

from core.canonical import canonical_url, site_key
from core.contract import PageStatus
from core.controls import escaped
from core.items import PageResult, ResponseCaching
from core.operations import EXTRACTIONS, Extraction
from core.policy import ascii_url
from crawler.exceptions import CrawlError, ExtractionFailed, UnsupportedContent
from crawler.extract.links import anchors, link_url, rel_values
from crawler.extract.site_map import MapCollector
from crawler.spiders.base import fetched_page, response_caching
from crawler.spiders.operations import OperationSpider
from crawler.spiders.sitemap import SitemapReading

if TYPE_CHECKING:
    from scrapy.http import Response
    from twisted.python.failure import Failure

#: Bytes of one sitemap, downloaded or decompressed (the protocol's 50 MB).
SITEMAP_MAX_BYTES = 50 * 1024 * 1024
#: Index levels followed below the first sitemap.
MAX_SITEMAP_DEPTH = 3
#: Sitemaps (indexes too) read by one map.
MAX_SITEMAPS = 1000
#: Sitemap entries read by one map in all: then reading stops.
MAX_LOCS = 1_000_000
#: Pages fetched for their links at each ``discover_links`` hop.
PAGES_PER_HOP = 20
#: Feeds read, and entries read of each.
MAX_FEEDS = 5
MAX_FEED_ENTRIES = 1000
#: Share of ``CRAWL_TIMEOUT`` a map may take before it answers with what it found.
DEADLINE_SHARE = 0.8
FEED_TYPES = frozenset({"application/rss+xml", "application/atom+xml"})
_XML = etree.XMLParser(recover=True, resolve_entities=False, no_network=True,
                       remove_comments=True, remove_pis=True, huge_tree=False)


class MapSpider(OperationSpider, SitemapReading):
    """One map: yields one :class:`PageResult` whose ``data`` is a
    :class:`~core.items.map.SiteMap` (see the module)."""

    name = "map"
    extraction: ClassVar[Extraction] = EXTRACTIONS["map"]

    def __init__(self, url: str | None = None, *args: Any, **kwargs: Any):
        super().__init__(url, *args, **kwargs)
        options = self.options
        self.collector = MapCollector(
            self.url, limit=options["limit"], search=options["search"],
            include_subdomains=options["include_subdomains"],
            include_paths=tuple(options["include_paths"] if not self._refusal else ()),
            exclude_paths=tuple(options["exclude_paths"] if not self._refusal else ()))
        self._max_size = SITEMAP_MAX_BYTES  # SitemapSpider's gunzip cap (set here: fed spiders
        self._warn_size = 0                 # are not made by from_crawler)
        self._pending = 0
        self._answered = False
        self._cut = False
        self._deadline = float("inf")
        #: What the start page's response says about keeping the map (the page cache).
        self._caching: ResponseCaching | None = None
        self._start: PageResult | None = None
        self._sitemaps_asked: set[str] = set()
        self.sitemaps_read: list[str] = []
        self.feeds_read: list[str] = []
        self._feeds_asked: set[str] = set()
        self._pages_asked: set[str] = {canonical_url(self.url)}
        self._locs = 0

    # -- the flow: every request counted, the last callback (or the deadline) answers --------

    async def start(self) -> AsyncIterator[Request | PageResult]:
        refused = self.refused_url()
        if refused is not None:
            yield self._failure(refused, None)
            return
        self._deadline = time.monotonic() + DEADLINE_SHARE * self.settings.getfloat(
            "CRAWL_TIMEOUT", 45.0)
        try:
            first = ascii_url(self.url)
        except ValueError as exc:
            yield self._failure(UnsupportedContent(f"Not a URL to fetch ({exc}).",
                                                   url=self.url), None)
            return
        yield self._request(first, self._on_start, self._start_failed)
        if self.options["sitemap"] != "skip":
            parts = urlsplit(first)
            robots = urlunsplit((parts.scheme, parts.netloc, "/robots.txt", "", ""))
            yield self._request(robots, self._on_robots, self._robots_failed)

    def _request(self, url: str, callback: Callable[..., Any], errback: Callable[..., Any],
                 **meta: Any) -> Request:
        left = max(self._deadline - time.monotonic(), 0.1)
        wait = min(self.settings.getfloat("DOWNLOAD_TIMEOUT", 20.0), left)
        self._pending += 1
        return Request(url, callback=self._counted(callback), errback=self._counted(errback),
                       dont_filter=True, meta={**meta, "download_timeout": wait})

    def _counted(self, call: Callable[..., Iterable[Any]]) -> Callable[..., Iterator[Any]]:
        def step(outcome: Any) -> Iterator[Any]:
            if not self._answered:
                if time.monotonic() >= self._deadline:
                    self._cut = True
                else:
                    try:
                        yield from (output for output in call(outcome) or ()
                                    if not self._answered)
                    except Exception:
                        self.logger.exception("Reading a source of a map failed")
            self._pending -= 1
            failed = self._start is not None and self._start.status != PageStatus.SUCCEEDED
            if not self._answered and (self._pending <= 0 or self._cut or failed):
                self._answered = True
                if self.report_caching and self._caching is not None:
                    yield self._caching  # the start page's word, before the result
                yield self._answer()
        return step

    def _answer(self) -> PageResult:
        start = self._start
        if start is None or start.status != PageStatus.SUCCEEDED:
            return start or self._failure(ExtractionFailed(
                "The start page gave no answer; nothing was charged.", url=self.url), None)
        try:
            start.data = self.collector.answer(self.sitemaps_read, self.feeds_read,
                                               cut=self._cut)
        except Exception:
            self.logger.exception("Answering a map of %s failed", escaped(self.url))
            return self._failure(ExtractionFailed(
                "The map could not be made; nothing was charged.", url=self.url), None)
        return start

    # -- the start page and the hops ---------------------------------------------------------

    def _on_start(self, response: Response) -> Iterator[Request]:
        if not isinstance(response, HtmlResponse):
            ctype = response.headers.get("Content-Type", b"").decode("latin-1") or "unknown"
            self._start = self._failure(UnsupportedContent(
                f"The target is not HTML ({ctype}).", url=response.url), response)
            return
        self._start = PageResult(url=self.url, status=PageStatus.SUCCEEDED,
                                 final_url=response.url, status_code=response.status)
        self._caching = response_caching(response)
        yield from self._on_page(response, hop=0)

    def _start_failed(self, failure: Failure) -> Iterator[Any]:
        self._start = next(iter(self.failed(failure)))
        return iter(())

    def _on_page(self, response: Response, hop: int = 0) -> Iterator[Request]:
        if not isinstance(response, HtmlResponse) or self.options["sitemap"] == "only":
            return
        page = fetched_page(response.url, response)
        root = page.root
        if root is None:
            return
        nofollow = "nofollow" in page.meta[0].get("robots", "").lower()
        next_hop: list[str] = []
        for anchor, url in anchors(root, page.base):
            title = anchor.text_content()
            if self.collector.add(url, "page", title) or self.collector.admits(url):
                next_hop.append(url)
        if hop == 0:
            yield from self._feeds(root, page.base)
        if hop >= self.options["discover_links"] or nofollow:
            return
        asked = 0
        for url in dict.fromkeys(next_hop):
            key = canonical_url(url)
            if asked >= PAGES_PER_HOP or key in self._pages_asked:
                continue
            self._pages_asked.add(key)
            asked += 1
            yield self._request(url, self._on_hop, self._quietly, hop=hop + 1)

    def _on_hop(self, response: Response) -> Iterator[Request]:
        return self._on_page(response, hop=response.meta.get("hop", 1))

    def _quietly(self, failure: Failure) -> Iterator[Any]:
        request = getattr(failure, "request", None)
        self.logger.info("A map source failed (%s): %s",
                         escaped(request.url if request else "?"), escaped(failure.value))
        return iter(())

    # -- feeds ---------------------------------------------------------------------------

    def _feeds(self, root: Any, base: str) -> Iterator[Request]:
        for link in root.xpath("//link[@href][@type]"):
            if ("alternate" not in rel_values(link)
                    or link.get("type", "").strip().lower() not in FEED_TYPES):
                continue
            url = link_url(base, link.get("href"))
            if url is None or url in self._feeds_asked or len(self._feeds_asked) >= MAX_FEEDS:
                continue
            self._feeds_asked.add(url)
            yield self._request(url, self._on_feed, self._quietly)

    def _on_feed(self, response: Response) -> Iterator[Request]:
        self.feeds_read.append(response.url)
        try:
            root = etree.fromstring(response.body, _XML)
        except etree.LxmlError:
            root = None
        if root is None:
            return iter(())
        for count, entry in enumerate(root.iter("{*}item", "{*}entry")):
            if count >= MAX_FEED_ENTRIES:
                break
            link = _child_text(entry, "link")
            href = next((one.get("href") for one in entry.iterfind("{*}link")
                         if one.get("href") and one.get("rel", "alternate") == "alternate"),
                        None)
            url = link_url(response.url, href or link)
            if url is not None:
                self.collector.add(url, "feed", _child_text(entry, "title"),
                                   _child_text(entry, "updated") or _child_text(entry, "pubDate"))
        return iter(())

    # -- sitemaps ------------------------------------------------------------------------

    def _on_robots(self, response: Response) -> Iterator[Request]:
        try:
            named = list(sitemap_urls_from_robots(response.body, base_url=response.url))
        except ValueError:
            named = []
        yield from self._sitemaps(named, depth=0, authority="robots")
        if not named:
            yield from self._defaults()

    def _robots_failed(self, failure: Failure) -> Iterator[Request]:
        self._quietly(failure)
        return self._defaults()

    def _defaults(self) -> Iterator[Request]:
        parts = urlsplit(ascii_url(self.url))
        yield from self._sitemaps([urlunsplit((parts.scheme, parts.netloc, path, "", ""))
                                   for path in ("/sitemap.xml", "/sitemap_index.xml")],
                                  depth=0, authority="")

    def _sitemaps(self, urls: Iterable[str], depth: int, authority: str) -> Iterator[Request]:
        """Requests for sitemaps not asked for yet. ``authority``: ``"robots"`` when
        robots.txt of the start site named them (they may list its URLs wherever they are),
        else the site whose URLs they may list (their own)."""
        for url in urls:
            try:
                key = canonical_url(ascii_url(url))
            except ValueError:
                continue
            if (key in self._sitemaps_asked or len(self._sitemaps_asked) >= MAX_SITEMAPS
                    or (authority != "robots" and site_key(key) != authority
                        and authority != "")):
                continue  # read once (an index naming itself); no other site's sitemap
            self._sitemaps_asked.add(key)
            yield self._request(key, self._on_sitemap, self._quietly, depth=depth,
                                authority=authority or site_key(key),
                                download_maxsize=SITEMAP_MAX_BYTES)

    def _on_sitemap(self, response: Response) -> Iterator[Request]:
        self.sitemaps_read.append(response.url)
        depth, authority = response.meta.get("depth", 0), response.meta.get("authority", "")
        body = self._get_sitemap_body(response)
        if body is None and isinstance(response, TextResponse):
            body = response.body
        if not body or self._locs >= MAX_LOCS:
            self._cut = self._cut or self._locs >= MAX_LOCS
            return
        if body.lstrip()[:1] != b"<":
            self._text_sitemap(body, response.url, authority)
            return
        try:
            sitemap = Sitemap(body)
            if sitemap.type == "sitemapindex":
                if depth < MAX_SITEMAP_DEPTH:  # an index names sitemaps of its own site
                    own = site_key(response.url)
                    locs = [entry["loc"] for entry in self._entries(sitemap)
                            if "loc" in entry and site_key(entry["loc"]) == own]
                    yield from self._sitemaps(locs, depth + 1, authority)
            elif sitemap.type == "urlset":
                for entry in self._entries(sitemap):
                    self._sitemap_url(entry.get("loc"), authority, entry.get("lastmod"))
        except (etree.LxmlError, StopIteration):
            self.logger.info("Broken sitemap XML (read what parsed): %s",
                             escaped(response.url))

    def _entries(self, sitemap: Sitemap) -> Iterator[dict[str, Any]]:
        for entry in sitemap:
            self._locs += 1
            if self._locs > MAX_LOCS or (self._locs % 10_000 == 0
                                         and time.monotonic() >= self._deadline):
                self._cut = True
                return
            yield entry

    def _text_sitemap(self, body: bytes, base: str, authority: str) -> None:
        for line in body.decode("utf-8", "replace").splitlines():
            self._locs += 1
            if self._locs > MAX_LOCS:
                self._cut = True
                return
            if line.strip():
                self._sitemap_url(urljoin(base, line.strip()), authority, None)

    def _sitemap_url(self, loc: str | None, authority: str, lastmod: str | None) -> None:
        if not loc:
            return
        if authority != "robots" and site_key(loc) != authority:
            return  # the protocol's host rule: a sitemap lists its own site's URLs
        self.collector.add(loc, "sitemap", None, lastmod)

    # SitemapReading's entry points are not this spider's flow (see _on_robots, _on_sitemap)
    def sitemap_page(self, url: str) -> Iterable[Any]:
        return ()

    def extract(self, page: Any) -> Any:  # OperationSpider's: the map has no extraction
        raise CrawlError("A map is not extracted from one page.")


def _child_text(entry: Any, tag: str) -> str | None:
    child = entry.find(f"{{*}}{tag}")
    return (child.text or "").strip() or None if child is not None else None
