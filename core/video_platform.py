"""What both the crawler and the API know about the video platform (YouTube): its link forms,
the watch URL, and the Data API's key header, limits and statistics.

Dependency-light on purpose (standard library and :mod:`core.formats`,
:mod:`core.numbers`, :mod:`core.items.video` only): the API validates video
links and its search adapters read Data API answers with these, and the API process must stay
free of Scrapy and the extraction libraries. :mod:`crawler.extract.video` builds the video
record on top of them.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import SplitResult, parse_qs, quote, urlencode, urlsplit

from core.formats import dig
from core.items.video import Engagement
from core.numbers import parse_count

#: Where the API's canonical watch and channel URLs point, whatever base the page came from.
CANONICAL_BASE = "https://www.youtube.com"
DATA_API_BASE = "https://www.googleapis.com/youtube/v3"
DATA_API_PARTS = "snippet,statistics,contentDetails,status"
#: Google APIs take their key as ``key=`` or in this header; the header keeps it out of URLs,
#: so out of every log line that prints one (the spider and the search adapters use it).
API_KEY_HEADER = "X-Goog-Api-Key"
DATA_API_MAX_IDS = 50  # videos.list refuses more ids in one call
VIDEO_ID = re.compile(r"[0-9A-Za-z_-]{11}")

_VIDEO_HOSTS = frozenset({
    "youtube.com", "www.youtube.com", "m.youtube.com", "music.youtube.com",
    "youtube-nocookie.com", "www.youtube-nocookie.com",
})
_SHORT_HOST = "youtu.be"
_ID_PATH = re.compile(r"/(?:shorts|embed|live|v)/([0-9A-Za-z_-]{11})/?")
_SHORT_PATH = re.compile(r"/([0-9A-Za-z_-]{11})/?")
_WATCH_PATHS = frozenset({"/watch", "/watch/"})
# 11 characters like an id, but embeds of a playlist and of a channel's current live stream
_NOT_VIDEO_IDS = frozenset({"videoseries", "live_stream"})
_DEFAULT_PORTS = (None, 80, 443)


def parse_video_url(url: str) -> str | None:
    """The 11-character video id of any link form of the platform; None for anything else.

    Absolute http(s) URLs only (the API validates them as such), on the platform's own hosts
    (exact names: ``youtube.com.evil.com`` is not one). Watch links may carry ``v`` anywhere
    in the query; the other forms put the id in the path, optionally with a trailing slash.
    """
    try:
        parts = urlsplit(url.strip())
        port = parts.port  # reading it validates it
    except (ValueError, AttributeError):
        return None
    if parts.scheme not in ("http", "https") or port not in _DEFAULT_PORTS:
        return None
    if parts.hostname == _SHORT_HOST:
        match = _SHORT_PATH.fullmatch(parts.path)
        return match.group(1) if match else None
    return path_video_id(parts) if parts.hostname in _VIDEO_HOSTS else None


def path_video_id(parts: SplitResult) -> str | None:
    """The id a YouTube path names, whatever the host: the crawler may fetch from a fake."""
    if parts.path in _WATCH_PATHS:
        video_id = next(iter(parse_qs(parts.query).get("v", [])), "")
        return video_id if VIDEO_ID.fullmatch(video_id) else None
    match = _ID_PATH.fullmatch(parts.path)
    return match.group(1) if match and match.group(1) not in _NOT_VIDEO_IDS else None


def watch_url(video_id: str, base: str = CANONICAL_BASE) -> str:
    """The watch page of ``video_id`` on ``base``: canonical by default, the configured
    (possibly local, for tests) site when the crawler fetches it."""
    return f"{base.rstrip('/')}/watch?v={quote(video_id, safe='')}"


def data_api_videos_url(base: str, video_ids: list[str], key: str | None = None) -> str:
    """``videos.list`` of ``video_ids`` with every part the record uses.

    ``base`` is the API root (:data:`DATA_API_BASE` when empty; tests point it at a fake).
    Without ``key`` the URL carries none, for callers that send it in the ``X-Goog-Api-Key``
    header so that it stays out of logs.
    """
    if not 0 < len(video_ids) <= DATA_API_MAX_IDS:
        raise ValueError(f"videos.list takes 1 to {DATA_API_MAX_IDS} ids, not {len(video_ids)}")
    query = {"part": DATA_API_PARTS, "id": ",".join(video_ids)}
    if key:
        query["key"] = key
    return f"{(base or DATA_API_BASE).rstrip('/')}/videos?{urlencode(query, safe=',')}"


def data_api_engagement(item: dict[str, Any]) -> Engagement:
    """The counts of one ``videos.list`` item, for the video record and for search results.

    The API writes counts as strings and leaves ``likeCount``/``commentCount`` out when the
    owner hides or disables them: those stay None, never 0.
    """
    statistics = dig(item, "statistics")
    return Engagement(views=parse_count(dig(statistics, "viewCount")),
                      likes=parse_count(dig(statistics, "likeCount")),
                      comments=parse_count(dig(statistics, "commentCount")))
