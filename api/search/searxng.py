"""SearXNG, the self-hosted metasearch engine: web, news and videos (``SEARXNG_URL``).

``GET {SEARXNG_URL}/search?format=json`` (the instance must enable the JSON format, else it
answers 403). SearXNG has no result count: a page holds ~20 results and is cut to ``limit``;
since it merges several engines, the same page often appears twice, which the common
de-duplication removes. It has no publisher field for news (``engine`` is the search engine,
not the publisher), so a news result's ``source`` is the host of its URL.
"""

from __future__ import annotations

from api.search.base import KINDS, Page, SearchProvider, SearchQuery, results_of
from core.config import SearchConfig, VideoConfig

#: SearXNG's category for each kind of search.
CATEGORIES = {"web": "general", "news": "news", "videos": "videos"}


def searxng_language(query: SearchQuery) -> str | None:
    """``en``, or ``en-US`` when a country is given too. SearXNG filters by country only
    through a language's regional variant, so a country without a language is not sent."""
    if not query.language:
        return None
    return f"{query.language}-{query.country.upper()}" if query.country else query.language


class SearxngProvider(SearchProvider):
    name = "searxng"
    supports = frozenset(KINDS)

    @classmethod
    def from_config(cls, search: SearchConfig, video: VideoConfig) -> SearxngProvider | None:
        if not search.searxng_url:
            return None
        return cls(search.searxng_url, timeout=search.search_timeout)

    def fetch(self, kind: str, query: SearchQuery) -> Page:
        reply = self.get_json("/search", {
            "q": query.query, "format": "json", "categories": CATEGORIES[kind], "pageno": 1,
            "language": searxng_language(query),
        })
        page = Page(reply.received_at)
        for item in results_of(reply.data, "results"):
            page.results.append({
                "url": item.get("url"), "title": item.get("title"),
                "snippet": item.get("content"), "published_at": item.get("publishedDate"),
                "channel": item.get("author"), "duration": item.get("length"),
                "thumbnail": item.get("thumbnail") or item.get("img_src"),
            })
        return page
