"""``scrapy crawl page -a url=…``: the extraction operation (``POST /scrape``)."""

from __future__ import annotations

from typing import Any

from core.items.page import Page
from crawler.extract.fetched import FetchedPage
from crawler.extract.page import extract_page
from crawler.spiders.base import SinglePageSpider, as_bool


class PageSpider(SinglePageSpider):
    """Title, readable text, links and metadata of one page.

    Options: ``-a include_links=false``, ``-a include_metadata=false``.
    """

    name = "page"

    def __init__(
        self, url: str | None = None, include_links: Any = True, include_metadata: Any = True,
        *args: Any, **kwargs: Any,
    ):
        super().__init__(url, *args, **kwargs)
        self.include_links = as_bool(include_links)
        self.include_metadata = as_bool(include_metadata)

    def extract(self, page: FetchedPage) -> Page:
        return extract_page(
            page, include_links=self.include_links, include_metadata=self.include_metadata
        )
