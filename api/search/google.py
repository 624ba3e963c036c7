"""Google Programmable Search (Custom Search JSON API): web only
(``GOOGLE_CSE_KEY`` + ``GOOGLE_CSE_CX``).

``GET {GOOGLE_CSE_URL}?cx=…&q=…``, the key in a header (see ``google_key_header``). Google has
no news or video endpoint, so it never answers /search/news or /search/videos.
``"quoted phrases"`` and ``site:`` operators are part of ``q``. ``items`` is left out when
nothing was found (no results, not an error); ``searchInformation.totalResults`` is a string,
and is not used: the contract has no total. ``num`` is ``limit``: Google bills per query and
its results hold each page once, so over-fetching would buy nothing.
"""

from __future__ import annotations

from api.search.base import (
    TRADITIONAL_CHINESE,
    Page,
    SearchProvider,
    SearchQuery,
    google_key_header,
    results_of,
)
from core.config import SearchConfig, VideoConfig

#: Google's codes where they are not ISO 639-1 (``lr=lang_iw``, ``hl=zh-TW``…).
LANGUAGES = {"he": "iw", "zh": "zh-CN"}


def google_language(language: str | None, country: str | None) -> str | None:
    if language == "zh" and country in TRADITIONAL_CHINESE:
        return "zh-TW"
    return LANGUAGES.get(language, language) if language else None


class GoogleProvider(SearchProvider):
    name = "google"
    supports = frozenset({"web"})

    def __init__(self, base_url: str, api_key: str, cx: str, *, timeout: float = 10.0):
        super().__init__(base_url, timeout=timeout)
        self.key_header = google_key_header(api_key)
        self.cx = cx

    @classmethod
    def from_config(cls, search: SearchConfig, video: VideoConfig) -> GoogleProvider | None:
        if not search.google_cse_key and not search.google_cse_cx:
            return None
        if not (search.google_cse_key and search.google_cse_cx):
            raise ValueError("Google Programmable Search needs both GOOGLE_CSE_KEY and "
                             "GOOGLE_CSE_CX; only one is set.")
        return cls(search.google_cse_url, search.google_cse_key, search.google_cse_cx,
                   timeout=search.search_timeout)

    def fetch(self, kind: str, query: SearchQuery) -> Page:
        language = google_language(query.language, query.country)
        reply = self.get_json("", {
            "cx": self.cx, "q": query.query, "num": query.limit,
            "gl": query.country, "hl": language,
            "lr": f"lang_{language}" if language else None,
        }, headers=self.key_header)
        page = Page(reply.received_at)
        for item in results_of(reply.data, "items"):
            page.results.append({
                "url": item.get("link"),
                "title": item.get("title") or item.get("htmlTitle"),
                "snippet": item.get("snippet") or item.get("htmlSnippet"),
            })
        return page
