"""YouTube Data API v3: video search, and engagement of YouTube results (``YOUTUBE_API_KEY``).

Search is ``search.list`` (100 quota units a call, ``type=video``), asked for exactly
``limit`` results: its video ids are unique, so there is nothing to de-duplicate. search.list
has no duration or counts; :meth:`YouTubeProvider.enrich` adds them with one batched
``videos.list`` call (1 unit) — for this provider's results and for the YouTube links among
any other provider's video results. ``site:`` has no meaning on YouTube; it is sent as text.
"""

from __future__ import annotations

import logging
from dataclasses import asdict
from typing import Any

from api.search.base import (
    TRADITIONAL_CHINESE,
    Page,
    ProviderError,
    SearchProvider,
    SearchQuery,
    google_key_header,
    results_of,
)
from core.config import SearchConfig, VideoConfig
from core.formats import dig
from core.numbers import parse_duration
from core.video_platform import (
    DATA_API_MAX_IDS,
    data_api_engagement,
    parse_video_url,
    watch_url,
)

logger = logging.getLogger(__name__)

#: Largest thumbnail first; search.list gives high (480x360), medium and default.
THUMBNAIL_SIZES = ("maxres", "standard", "high", "medium", "default")


def youtube_language(language: str | None, country: str | None) -> str | None:
    """``relevanceLanguage``: ISO 639-1, except Chinese, which YouTube splits by script."""
    if language == "zh":
        return "zh-Hant" if country in TRADITIONAL_CHINESE else "zh-Hans"
    return language


class YouTubeProvider(SearchProvider):
    name = "youtube"
    supports = frozenset({"videos"})

    def __init__(self, base_url: str, api_key: str, *, timeout: float = 10.0):
        super().__init__(base_url, timeout=timeout)
        self.key_header = google_key_header(api_key)

    @classmethod
    def from_config(cls, search: SearchConfig, video: VideoConfig) -> YouTubeProvider | None:
        if not video.youtube_api_key:
            return None
        return cls(video.youtube_api_url, video.youtube_api_key,
                   timeout=search.search_timeout)

    def fetch(self, kind: str, query: SearchQuery) -> Page:
        reply = self.get_json("/search", {
            "part": "snippet", "type": "video", "q": query.query, "maxResults": query.limit,
            "regionCode": query.country.upper() if query.country else None,
            "relevanceLanguage": youtube_language(query.language, query.country),
        }, headers=self.key_header)
        page = Page(reply.received_at)
        for item in results_of(reply.data, "items"):
            video_id = dig(item, "id", "videoId")
            if not isinstance(video_id, str):  # a channel or playlist despite type=video
                continue
            snippet = item.get("snippet") if isinstance(item.get("snippet"), dict) else {}
            page.results.append({
                "url": watch_url(video_id), "title": snippet.get("title"),
                "snippet": snippet.get("description"), "channel": snippet.get("channelTitle"),
                "thumbnail": best_thumbnail(snippet.get("thumbnails")),
                "published_at": snippet.get("publishedAt"),
            })
        return page

    def enrich(self, results: list[dict[str, Any]]) -> None:
        """Fill ``engagement`` (and a missing ``duration_seconds``) of the YouTube links in
        ``results``, in place, with one videos.list call.

        Best effort: the search itself succeeded and was paid for by the client, so a failure
        here (quota, timeout…) is logged and leaves engagement null rather than failing the
        request. Ids videos.list does not return (private, deleted) keep null too.
        """
        by_id: dict[str, list[dict[str, Any]]] = {}
        for result in results:
            video_id = parse_video_url(result["url"])
            if video_id:
                by_id.setdefault(video_id, []).append(result)
        if not by_id:
            return
        try:
            reply = self.get_json("/videos", {
                "part": "contentDetails,statistics", "id": ",".join(list(by_id)[:DATA_API_MAX_IDS]),
            }, headers=self.key_header)
            items = results_of(reply.data, "items")
        except ProviderError as exc:
            logger.warning("YouTube engagement of %s videos not added: %s", len(by_id),
                           exc.reason)
            return
        for item in items:
            video_id = item.get("id")
            for result in by_id.get(video_id, []) if isinstance(video_id, str) else []:
                result["engagement"] = asdict(data_api_engagement(item))
                if result["duration_seconds"] is None:
                    result["duration_seconds"] = parse_duration(
                        dig(item, "contentDetails", "duration"))


def best_thumbnail(thumbnails: object) -> str | None:
    for size in THUMBNAIL_SIZES:
        url = dig(thumbnails, size, "url")
        if isinstance(url, str) and url:
            return url
    return None
