"""A collection's pages and the page cache (``max_age``; docs/api.md, The page cache): the
pages a slice leases that the cache holds fresh enough are stored from it, without a fetch, a
host permit or a worker's crawl; a page a collection fetches is kept for later collections and
requests, as a ``/scrape`` with ``max_age`` keeps its own.

A crawl needs a page's links and its ``rel=canonical`` besides its answer: a crawl keeps them
with the answer (under :data:`FOLLOW`, which answers never show), and takes from the cache only
entries that have them (an answer kept by ``/scrape`` has not: that page is fetched, and its
entry then gets them).
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
from core.items import PageResult, plain
from core.operations import BY_EXTRACTION, EXTRACTIONS
from crawler.spiders.collected import CollectedPage
from storage import page_cache
from storage.db import Database
from worker.page_cache import keep

logger = logging.getLogger(__name__)

#: Where a crawl keeps a page's links and canonical URL in its cached answer.
FOLLOW = "follow"
_RESULT_FIELDS = tuple(spec.name for spec in fields(PageResult))


@dataclass(frozen=True)
class CollectionCache:
    """The page cache as one collection uses it: entries of its extract's operation with its
    options, at most ``max_age`` seconds old; ``crawl``: its pages' links are needed."""

    db: Database
    operation: str
    options: dict[str, Any]
    max_age: int
    crawl: bool
    max_bytes: int

    @classmethod
    def of(cls, db: Database, config: Config, extract: str, spec: dict[str, Any],
           crawl: bool) -> CollectionCache | None:
        """The cache of a collection (its ``extract`` and stored ``spec``); None when it did
        not ask for cached pages or the deployment has no cache."""
        max_age, max_bytes = int(spec.get("max_age") or 0), config.cache.cache_max_bytes
        if not max_age or not max_bytes:
            return None
        page = BY_EXTRACTION.get(extract)  # the same entries as the operation's requests
        return cls(db, page.name if page is not None else extract,
                   EXTRACTIONS[extract].option_values(spec.get("options") or {}), max_age,
                   crawl, max_bytes)

    def key(self, entry: Entry) -> str:
        return cache_key(self.operation, entry.url, self.options)

    def hits(self, entries: Iterable[Entry]) -> dict[Entry, CollectedPage]:
        """The pages of ``entries`` the cache holds fresh enough, as fetched then (one
        query); a database failure is no hit."""
        keys = {self.key(entry): entry for entry in entries if shared_url(entry.url)}
        try:
            found = page_cache.fresh(self.db, list(keys), self.max_age)
        except SQLAlchemyError as exc:
            logger.warning("The page cache is unavailable: %s", exc)
            return {}
        pages: dict[Entry, CollectedPage] = {}
        for key, cached in found.items():
            follow = cached.result.get(FOLLOW)
            if self.crawl and not isinstance(follow, dict):
                continue  # kept without its links: fetched, to follow them
            result = PageResult(**{name: cached.result.get(name) for name in _RESULT_FIELDS})
            pages[keys[key]] = CollectedPage(
                result=result, links=tuple((follow or {}).get("links") or ()),
                canonical=(follow or {}).get("canonical"))
        return pages

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

