"""A collection's pages and the page cache (``max_age``; docs/api.md, The page cache): the
pages a slice leases that the cache holds fresh enough are stored from it, without a fetch, a
host permit or a worker's crawl; a page a collection fetches is kept for later collections and
requests, as a ``/scrape`` with ``max_age`` keeps its own.

A collection with change tracking also **revalidates** (even with ``max_age`` 0): a leased page
the cache holds, fresh or not, with validators is fetched conditionally (``If-None-Match``,
``If-Modified-Since``), and a 304 stores the cached answer as fetched now (the entry made fresh
again with the 304's validators, as a single page's job does), so that the page compares
``same``; its pages are kept, for the next run to revalidate.

A crawl needs a page's links and its ``rel=canonical`` besides its answer: a crawl keeps them
with the answer (under :data:`FOLLOW`, which answers never show), and takes from the cache only
entries that have them (an answer kept by ``/scrape`` has not: that page is fetched, and its
entry then gets them; a 304 for such an entry is fetched again, whole).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from collecting.frontier import Entry
from core.cache import cache_key, shared_url
from core.config import Config
from core.contract import PageStatus
from core.items import PageResult, ResponseCaching, plain
from core.operations import BY_EXTRACTION, EXTRACTIONS
from crawler.spiders.collected import CollectedPage
from storage import page_cache
from storage.db import Database
from worker.page_cache import keep, not_modified, revalidated

logger = logging.getLogger(__name__)

#: Where a crawl keeps a page's links and canonical URL in its cached answer.
FOLLOW = "follow"
_RESULT_FIELDS = tuple(spec.name for spec in fields(PageResult))


@dataclass(frozen=True)
class CollectionCache:
    """The page cache as one collection uses it: entries of its extract's operation with its
    options, taken at most ``max_age`` seconds old (0: none taken); ``revalidate``: its pages
    are fetched conditionally when the cache has them (change tracking); ``crawl``: its pages'
    links are needed."""

    db: Database
    operation: str
    options: dict[str, Any]
    max_age: int
    crawl: bool
    max_bytes: int
    revalidate: bool = False

    @classmethod
    def of(cls, db: Database, config: Config, extract: str, spec: dict[str, Any],
           crawl: bool) -> CollectionCache | None:
        """The cache of a collection (its ``extract`` and stored ``spec``); None when it
        neither asked for cached pages nor tracks changes, or the deployment has no cache."""
        max_age, max_bytes = int(spec.get("max_age") or 0), config.cache.cache_max_bytes
        tracked = bool(spec.get("change_tracking"))
        if not (max_age or tracked) or not max_bytes:
            return None
        page = BY_EXTRACTION.get(extract)  # the same entries as the operation's requests
        return cls(db, page.name if page is not None else extract,
                   EXTRACTIONS[extract].option_values(spec.get("options") or {}), max_age,
                   crawl, max_bytes, revalidate=tracked)

    def key(self, entry: Entry) -> str:
        return cache_key(self.operation, entry.url, self.options)

    def look_up(self, entries: Iterable[Entry]
                ) -> tuple[dict[Entry, CollectedPage], dict[Entry, dict[str, str]]]:
        """The pages of ``entries`` the cache holds fresh enough, as fetched then; and, when
        revalidating, the others' conditional fetch (the spider's ``if_none_match`` and
        ``if_modified_since``). A query each; a database failure is no hit and no condition."""
        keys = {self.key(entry): entry for entry in entries if shared_url(entry.url)}
        try:
            found = page_cache.fresh(self.db, list(keys), self.max_age) if self.max_age else {}
            # a fresh entry a crawl cannot take holds no links: its page is fetched whole
            known = page_cache.validators(self.db, [key for key in keys if key not in found]
                                          ) if self.revalidate else {}
        except SQLAlchemyError as exc:
            logger.warning("The page cache is unavailable: %s", exc)
            return {}, {}
        pages: dict[Entry, CollectedPage] = {}
        for key, cached in found.items():
            page = self._page(cached.result)
            if page is not None:
                pages[keys[key]] = page
        conditions = {keys[key]: {name: value for name, value in (
            ("if_none_match", etag), ("if_modified_since", modified)) if value}
            for key, (etag, modified) in known.items()}
        return pages, conditions

    def _page(self, cached: dict[str, Any], **changed: Any) -> CollectedPage | None:
        """A cached answer as the page of a collection (``changed``: fields of its result
        replaced); None for a crawl when it was kept without its links."""
        follow = cached.get(FOLLOW)
        if self.crawl and not isinstance(follow, dict):
            return None  # kept without its links: fetched, to follow them
        result = PageResult(**{name: cached.get(name) for name in _RESULT_FIELDS})
        for name, value in changed.items():
            setattr(result, name, value)
        return CollectedPage(result=result, links=tuple((follow or {}).get("links") or ()),
                             canonical=(follow or {}).get("canonical"))

    def revalidated(self, entry: Entry, page: CollectedPage) -> CollectedPage | None:
        """``page``, fetched for ``entry``, or, when it is a 304 (a conditional fetch), the
        cached answer as fetched now, with its links (:func:`worker.page_cache.revalidated`
        keeps the entry fresh, or forgets it); None when the entry is gone or, for a crawl,
        holds no links: fetch the page again, whole."""
        if not not_modified(page.result):
            return page
        cached, _ = revalidated(self.db, self.key(entry), page.caching or ResponseCaching())
        if cached is None:
            return None
        found = self._page(cached.result, url=entry.url, fetched_at=page.result.fetched_at)
        if found is None:
            return None
        found.crawl_delay, found.refusals = page.crawl_delay, page.refusals
        return found  # not kept again (caching None): its entry was just refreshed

    def keep(self, entry: Entry, page: CollectedPage) -> None:
        """Keep the answer of ``page``, fetched for ``entry``, when it succeeded and its
        response allows a shared cache to (written after, by the worker's cache writer)."""
        if page.caching is None or not page.caching.storable or not shared_url(entry.url):
            return
        result = plain(page.result)
        if result["status"] != PageStatus.SUCCEEDED:
            return
        if self.crawl:
            result[FOLLOW] = {"links": list(page.links), "canonical": page.canonical}
        keep(self.db, self.key(entry), operation=self.operation, url=entry.key, result=result,
             max_bytes=self.max_bytes, caching=page.caching)

