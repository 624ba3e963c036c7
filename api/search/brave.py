"""Brave Search API: web, news and videos (``BRAVE_API_KEY``).

``GET {BRAVE_API_URL}/{web|news|videos}/search`` with the key in ``X-Subscription-Token``.
Brave bills per request, not per result, so it is asked for a few more results than ``limit``
(within its per-endpoint maximum): its answers can hold the same page twice, and the spare
results fill the places duplicates leave. Quirks handled: ``web`` absent when nothing was
found, ``<strong>`` tags in descriptions (stripped in common code), an ``ErrorResponse`` body
with either an ``error`` object or an ``errors`` list, every ``video.*`` field optional.
"""

from __future__ import annotations

from api.search.base import (
    KINDS,
    TRADITIONAL_CHINESE,
    Page,
    ProviderError,
    SearchProvider,
    SearchQuery,
    json_error_reason,
    results_of,
)
from core.config import SearchConfig, VideoConfig
from core.formats import dig

ENDPOINTS = {"web": "/web/search", "news": "/news/search", "videos": "/videos/search"}
#: Brave's largest ``count`` per endpoint.
MAX_COUNT = {"web": 20, "news": 50, "videos": 50}
#: Results asked for beyond ``limit``, to make up for duplicates.
SPARE_RESULTS = 5
#: Brave's ``search_lang`` where it is not our ISO 639-1 code (Norwegian Bokmål for every
#: Norwegian code; other codes are sent as they are and Brave rejects those it lacks).
LANGUAGES = {"ja": "jp", "no": "nb", "nn": "nb"}


def brave_language(language: str | None, country: str | None) -> str | None:
    """Brave's ``search_lang`` for our language code, refined by the country where Brave has
    regional variants (zh-hans/zh-hant, pt-br/pt-pt, en-gb)."""
    if language == "zh":
        return "zh-hant" if country in TRADITIONAL_CHINESE else "zh-hans"
    if language == "pt":
        return "pt-br" if country == "br" else "pt-pt"
    if language == "en" and country == "gb":
        return "en-gb"
    return LANGUAGES.get(language, language) if language else None


class BraveProvider(SearchProvider):
    name = "brave"
    supports = frozenset(KINDS)

    def __init__(self, base_url: str, api_key: str, *, timeout: float = 10.0):
        super().__init__(base_url, timeout=timeout)
        self.api_key = api_key

    @classmethod
    def from_config(cls, search: SearchConfig, video: VideoConfig) -> BraveProvider | None:
        if not search.brave_api_key:
            return None
        return cls(search.brave_api_url, search.brave_api_key, timeout=search.search_timeout)

    def fetch(self, kind: str, query: SearchQuery) -> Page:
        reply = self.get_json(ENDPOINTS[kind], {
            "q": query.query,
            "count": min(query.limit + SPARE_RESULTS, MAX_COUNT[kind]),
            "country": query.country.upper() if query.country else None,
            "search_lang": brave_language(query.language, query.country),
        }, headers={"X-Subscription-Token": self.api_key})
        data = reply.data
        if data.get("type") == "ErrorResponse":  # documented with HTTP errors; never trust 200
            raise ProviderError(json_error_reason(data) or "ErrorResponse")
        items = results_of(data.get("web"), "results") if kind == "web" else results_of(
            data, "results")
        page = Page(reply.received_at)
        for item in items:
            page.results.append({
                "url": item.get("url"), "title": item.get("title"),
                "snippet": item.get("description"),
                "source": dig(item, "profile", "name") or dig(item, "meta_url", "hostname"),
                # page_age is the page's own date; age ("2 hours ago") only when it is absent.
                "published_at": item.get("page_age") or item.get("age"),
                "channel": dig(item, "video", "creator") or dig(item, "video", "author", "name"),
                "duration": dig(item, "video", "duration"),
                "thumbnail": dig(item, "thumbnail", "src") or dig(item, "thumbnail", "original"),
            })
        return page
