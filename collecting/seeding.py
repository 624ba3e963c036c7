"""Seeding a collection's frontier: what its first slice admits before any page is fetched.

A batch admits its URLs; a crawl its start URL and, when asked, the page URLs its site's
sitemaps list (as depth 1, within the crawl's scope). Then the frontier is marked seeded and
the collection gets as many slices as there are workers to run them (:mod:`collecting.slice`).
"""

from __future__ import annotations

import logging
from typing import Any

from redis import Redis
from rq import Worker

from collecting.control import enqueue_slice
from collecting.frontier import Entry, Frontier, Skip, sort_links
from core.config import Config
from core.controls import escaped
from core.scope import CrawlScope
from crawler.admission import known_refusals
from crawler.runner import shared_crawler
from worker import queues

logger = logging.getLogger(__name__)


def seed(frontier: Frontier, redis: Redis, config: Config, collection_id: str,
         spec: dict[str, Any], scope: CrawlScope | None, budget: int) -> list[Skip]:
    """Admit the batch's URLs (``scope`` None), or the crawl's start URL and sitemap URLs,
    then mark the frontier seeded and start the other slices; the sitemap URLs refused that
    are new skips (for the caller to record). Idempotent (admission is)."""
    refused: list[Skip] = []
    if scope is None:
        frontier.admit([Entry.of(url, 0) for url in spec["urls"]])
    else:
        start = spec["url"]
        frontier.admit([Entry.of(start, 0)], budget)
        if spec.get("use_sitemap") and spec["max_depth"] >= 1:
            timeout = 2 * config.crawler.crawl_timeout
            _, refused = frontier.decide(*sitemap_entries(start, scope, budget, timeout),
                                         budget)
    # As many slices as there are workers to run them, up to COLLECTION_SLICES: two slices in
    # one process only compete for its one core (and its GIL).
    workers = Worker.count(queue=queues.queue(queues.COLLECTIONS, redis))
    frontier.set_width(max(1, min(config.collections.collection_slices, workers)))
    if frontier.mark("seeded"):
        for _ in range(frontier.width() - 1):
            enqueue_slice(redis, collection_id, config)
    return refused


def sitemap_entries(start: str, scope: CrawlScope, max_pages: int, timeout: float
                    ) -> tuple[list[Entry], list[Skip]]:
    """The pages the sitemaps of ``start``'s site list, within ``scope``, and those out of it
    (:func:`~collecting.frontier.sort_links`: robots.txt, read with the sitemaps, refuses
    what it disallows); none when the discovery fails (the links still lead on)."""
    from crawler.spiders.sitemap import SitemapUrlsSpider, sitemap_budget

    try:
        # A site's sitemaps may be many files: ``timeout`` is twice a page's (within the
        # slice's job timeout); what a slower discovery found is lost.
        items = shared_crawler().crawl(SitemapUrlsSpider, url=start, timeout=timeout,
                                       max_urls=sitemap_budget(max_pages))
    except Exception:
        logger.exception("Sitemap discovery failed for %s", escaped(start))
        return [], []
    return sort_links(scope, (item["url"] for item in items), 1,
                      known_refusals(start, shared_crawler().settings))
