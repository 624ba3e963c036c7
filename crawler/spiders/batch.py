"""``scrapy crawl batch -a urls_file=urls.txt``: a batch of pages, as ``POST /collections``
(``mode: batch``) runs it, without the API::

    scrapy crawl batch -a urls_file=urls.txt -a extract=products -O out.csv
    scrapy crawl batch -a urls=https://a.example/,https://b.example/x -O out.jsonl

Each page is fetched once however often it is listed (by its canonical URL: ``/a?utm_source=x``
and ``/a#top`` are ``/a``) and gives one result, under the first spelling listed. Unlike a
crawl, a batch fetches what it lists: no links are followed, and no page is dropped as a
duplicate after its fetch (a collection does the same).
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from scrapy import Request

from collecting.frontier import Entry
from core.canonical import canonical_url
from core.controls import control_character_error, url_lines
from crawler.spiders.base import as_http_url
from crawler.spiders.collected import CollectedPage
from crawler.spiders.multipage import MultiPageSpider, Output

logger = logging.getLogger(__name__)

#: ``-a urls=…`` is split at commas that start another URL: a comma inside a URL
#: (``/search?q=a,b``) stays in it.
URL_SEPARATOR = re.compile(r"\s*,\s*(?=https?://)", re.IGNORECASE)
#: Bad entries named in the error at most (a wrong file can have thousands).
MAX_NAMED = 10


def listed_urls(urls: Any) -> list[tuple[str, str]]:
    """(where, URL) for each URL of ``-a urls=…`` (or a list of them, from Python)."""
    if not urls:
        return []
    items = URL_SEPARATOR.split(urls.strip()) if isinstance(urls, str) else list(urls)
    return [(f"urls[{index}]", url) for index, url in enumerate(items)]


def file_urls(path: str | None) -> list[tuple[str, str]]:
    """(where, URL) for each line of ``path`` with a URL (:func:`~core.controls.url_lines`:
    blank lines and lines starting with ``#`` are skipped)."""
    if not path:
        return []
    text = Path(path).read_text(encoding="utf-8-sig")
    return [(f"{path} line {number}", url) for number, url in url_lines(text)]


def _has_control(url: Any) -> bool:
    return isinstance(url, str) and control_character_error(url) is not None


class BatchSpider(MultiPageSpider):
    """One result per distinct page of ``urls`` and ``urls_file`` (see the module).

    Options: ``urls`` (comma-separated), ``urls_file`` (one URL a line), ``extract``
    (``page``, ``contacts`` or ``products``).
    """

    name = "batch"

    def __init__(self, urls: Any = None, urls_file: str | None = None, extract: str = "page",
                 *args: Any, **kwargs: Any):
        super().__init__(*args, extract=extract, **kwargs)
        listed = listed_urls(urls) + file_urls(urls_file)
        if not listed:
            raise ValueError(f"{self.name}: pass the pages with -a urls=… (comma-separated) "
                             "or -a urls_file=… (one URL a line)")
        bad = []
        for where, url in listed:
            try:
                as_http_url(self.name, url)
            except (AttributeError, TypeError, ValueError):
                why = " (a control character)" if _has_control(url) else ""
                bad.append(f"{where}: {url!r}{why}")
        if bad:
            more = f" and {len(bad) - MAX_NAMED} more" if len(bad) > MAX_NAMED else ""
            raise ValueError(f"{self.name}: not http(s) URLs: {'; '.join(bad[:MAX_NAMED])}"
                             f"{more}")
        #: Every URL listed, in order (the frontier keeps the first spelling of each page).
        self.entries = [Entry(url.strip(), canonical_url(url), 0) for _, url in listed]

    async def start(self) -> AsyncIterator[Request]:
        frontier = self.open_frontier()
        frontier.admit(self.entries)
        logger.info("Batch of %d URLs, %d distinct pages", len(self.entries),
                    frontier.state().admitted)
        for entry in frontier.take():
            yield self.page_request(entry)

    def collected(self, entry: Entry, page: CollectedPage) -> Iterator[Output]:
        yield page.result
