"""Faithful local fakes of the search providers' HTTP APIs (shapes from PROVIDERS.md).

One :class:`FakeProvider` (a ThreadingHTTPServer on loopback, HTTP/1.1 keep-alive) per
provider. Each checks what its provider checks (key, parameter ranges) and records every
request in ``received`` so tests can assert the parameters an adapter sent. The query text
selects the odd answers, as a real provider would give them:

- ``fake:empty`` — no results, in the provider's own way (Brave drops ``web``, Google
  ``items``; SearXNG and YouTube send an empty list);
- ``fake:error`` — the provider's server error; ``fake:quota`` — its quota error
  (Brave 429 QUOTA_LIMITED, Google 429 rateLimitExceeded, YouTube 403 quotaExceeded);
- ``fake:rate`` — Brave's 429 RATE_LIMITED in the ``errors`` list variant;
- ``fake:forbidden`` — SearXNG's 403 of an instance without the JSON format;
- ``fake:malformed`` — 200 with cut-off JSON; ``fake:html`` — 200 with an HTML page;
- ``fake:slow`` — the normal answer after :data:`SLOW_SECONDS`.

Keys: :data:`BAD_KEY` is refused as each provider refuses a wrong key; YouTube's
:data:`VIDEOS_QUOTA_KEY` searches but gets 403 quotaExceeded from videos.list.

    python -m tests.support.fakes.search_providers brave 8765   # one fake, in its own process
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from w3lib.html import remove_tags, replace_entities

from tests.support.fakes.search_data import FIXED_DATE, NEWS, VIDEOS, WEB, YOUTUBE_VIDEOS

BAD_KEY = "bad-key"
#: Keys the tests configure (the fakes accept any key but the bad ones).
KEYS = {"brave": "brave-test-key", "google": "google-test-key", "youtube": "youtube-test-key"}
VIDEOS_QUOTA_KEY = "videos-quota-key"
SLOW_SECONDS = 3.0
SEARXNG_PAGE = 20
SEARXNG_LANGUAGE = re.compile(r"auto|all|[a-z]{2}(?:-[A-Z]{2})?")


@dataclass
class Answer:
    status: int = 200
    body: Any = None  # JSON-encoded unless bytes
    content_type: str = "application/json; charset=utf-8"
    delay: float = 0.0


@dataclass
class Received:
    path: str
    params: dict[str, str]
    headers: dict[str, str] = field(default_factory=dict)


Route = Callable[[str, dict[str, str], dict[str, str]], Answer]


class FakeProvider(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, route: Route, port: int = 0):
        self.route = route
        self.received: list[Received] = []
        super().__init__(("127.0.0.1", port), _Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def start(self) -> FakeProvider:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def last(self, path: str | None = None) -> Received:
        """The latest request (to ``path``, when given)."""
        return next(r for r in reversed(self.received) if path is None or r.path == path)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # keep-alive clients would otherwise wait ~40 ms per answer
    server: FakeProvider

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        params = dict(parse_qsl(parts.query, keep_blank_values=True))
        headers = {name.lower(): value for name, value in self.headers.items()}
        self.server.received.append(Received(parts.path, params, headers))
        answer = self.server.route(parts.path, params, headers)
        if answer.delay:
            time.sleep(answer.delay)
        body = answer.body if isinstance(answer.body, bytes) else json.dumps(answer.body).encode()
        self.send_response(answer.status)
        self.send_header("Content-Type", answer.content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def date_time_string(self, timestamp: float | None = None) -> str:
        return FIXED_DATE

    def log_message(self, *args: Any) -> None:
        pass


def _common(query: str, normal: Callable[[], Answer]) -> Answer | None:
    """The answers every provider can give: broken bodies and slowness."""
    if query == "fake:malformed":
        return Answer(body=b'{"results": [{"url": "https://example.com/", "tit')
    if query == "fake:html":
        return Answer(body=b"<!doctype html><title>Gateway</title>",
                      content_type="text/html; charset=utf-8")
    if query == "fake:slow":
        answer = normal()
        answer.delay = SLOW_SECONDS
        return answer
    return None


def _plain(html: str) -> str:
    return replace_entities(remove_tags(html))


def _host(url: str) -> str:
    return urlsplit(url).hostname or ""


# --- SearXNG -------------------------------------------------------------------------------

def searxng(path: str, params: dict[str, str], headers: dict[str, str]) -> Answer:
    query = params.get("q", "").strip()
    if path != "/search":
        return Answer(404, b"Not Found", "text/html")
    if params.get("format") != "json" or query == "fake:forbidden":
        return Answer(403, b"<html><body><h1>Forbidden</h1></body></html>", "text/html")
    if not query:
        return Answer(400, {"error": "No query"})
    if not SEARXNG_LANGUAGE.fullmatch(params.get("language", "auto")):
        return Answer(400, {"error": "Invalid language"})
    if query == "fake:error":
        return Answer(500, {"error": "search error"})
    category = params.get("categories", "general")
    return _common(query, lambda: _searxng_page(query, category)) or _searxng_page(query,
                                                                                   category)


def _searxng_page(query: str, category: str) -> Answer:
    results: list[dict[str, Any]] = []
    rows = [] if query == "fake:empty" else _searxng_rows(category)
    for position, row in enumerate(rows[:SEARXNG_PAGE], 1):
        results.append({
            "engine": "brave", "engines": ["brave", "duckduckgo"], "category": category,
            "publishedDate": None, "thumbnail": "", "img_src": "", "iframe_src": "",
            "length": None, "author": "", "score": 1.0 / position, "positions": [position],
            "template": "videos.html" if category == "videos" else "default.html",
            "parsed_url": [*urlsplit(row["url"]), ""], **row,
        })
    return Answer(body={"query": query, "number_of_results": 0, "results": results,
                        "answers": [], "corrections": [], "infoboxes": [], "suggestions": [],
                        "unresponsive_engines": [["google", "timeout"]]})


def _searxng_rows(category: str) -> list[dict[str, Any]]:
    """The corpus as SearXNG writes it: no publisher for news, ``length`` in any notation."""
    if category == "news":
        return [{"url": url, "title": title, "content": snippet, "publishedDate": date}
                for url, title, snippet, _, date, _ in NEWS]
    if category == "videos":
        return [{"url": url, "title": title, "content": f"{title} on video.", "author": channel,
                 "length": duration, "thumbnail": thumbnail or "", "publishedDate": date}
                for url, title, channel, duration, thumbnail, date in VIDEOS]
    return [{"url": url, "title": title, "content": snippet} for url, title, snippet in WEB]


# --- Brave ---------------------------------------------------------------------------------

BRAVE_MAX_COUNT = {"/web/search": 20, "/news/search": 50, "/videos/search": 50}


def _brave_error(status: int, code: str, detail: str, *, as_list: bool = False) -> Answer:
    error = {"id": "c2a4f2e0-0000-4000-8000-000000000000", "status": status, "code": code,
             "detail": detail, "meta": {"component": "api"}}
    body = {"type": "ErrorResponse", "time": 1663072993}
    body.update({"errors": [error]} if as_list else {"error": error})
    return Answer(status, body)


def brave(path: str, params: dict[str, str], headers: dict[str, str]) -> Answer:
    query = params.get("q", "")
    if path not in BRAVE_MAX_COUNT:
        return Answer(404, b"Not Found", "text/plain")
    if headers.get("x-subscription-token", BAD_KEY) == BAD_KEY:
        return _brave_error(422, "SUBSCRIPTION_TOKEN_INVALID",
                            "The provided subscription token is invalid.")
    count = int(params.get("count", "20"))
    if not 1 <= count <= BRAVE_MAX_COUNT[path] or not query or len(query) > 400:
        return _brave_error(422, "VALIDATION", "Unable to validate request parameter(s).")
    if query == "fake:quota":
        return _brave_error(429, "QUOTA_LIMITED", "Request quota limit exceeded for plan.")
    if query == "fake:rate":
        return _brave_error(429, "RATE_LIMITED", "Request rate limit exceeded for plan.",
                            as_list=True)
    if query == "fake:error":
        return _brave_error(500, "INTERNAL_ERROR", "An internal error occurred.")
    return _common(query, lambda: _brave_page(path, query, count)) or _brave_page(path, query,
                                                                                   count)


def _brave_page(path: str, query: str, count: int) -> Answer:
    empty = query == "fake:empty"
    head = {"query": {"original": query, "more_results_available": not empty}}
    if path == "/web/search":
        body: dict[str, Any] = {"type": "search", **head}
        if not empty:
            body["web"] = {"type": "search", "family_friendly": True, "results": [
                {"title": _plain(title), "url": url, "description": snippet.replace(
                    "<b>", "<strong>").replace("</b>", "</strong>"), "age": "3 days ago",
                 "page_age": "2026-01-12T10:00:00", "language": "en",
                 "meta_url": {"hostname": _host(url)}, "thumbnail": {"src": ""}}
                for url, title, snippet in WEB[:count]]}
        return Answer(body=body)
    results: list[dict[str, Any]] = []
    if path == "/news/search" and not empty:
        for url, title, snippet, publisher, date, age in NEWS[:count]:
            item = {"type": "news_result", "title": title, "url": url, "description": snippet,
                    "age": age, "meta_url": {"hostname": _host(url)},
                    "thumbnail": {"src": "https://imgs.search.brave.com/n.jpg"}}
            item.update({"page_age": date} if date else {})
            item.update({"profile": {"name": publisher}} if publisher else {})
            results.append(item)
    elif path == "/videos/search" and not empty:
        for url, title, channel, duration, thumbnail, date in VIDEOS[:count]:
            item = {"type": "video_result", "title": title, "url": url,
                    "description": f"{title} on <strong>video</strong>.", "age": "1 year ago",
                    "meta_url": {"hostname": _host(url)}}
            item.update({"page_age": date} if date else {})
            item.update({"thumbnail": {"src": thumbnail, "original": thumbnail}}
                        if thumbnail else {})
            if duration is not None:  # every video.* field is optional
                item["video"] = {"duration": duration, "views": 1523000, "creator": channel,
                                 "publisher": "YouTube"}
            results.append(item)
    kind = "news" if path == "/news/search" else "videos"
    return Answer(body={"type": kind, **head, "results": results})


# --- Google (Custom Search JSON API, and the YouTube Data API's error shape) ---------------

def _google_error(status: int, message: str, reason: str, google_status: str,
                  detail_reason: str | None = None, domain: str = "global") -> Answer:
    error: dict[str, Any] = {"code": status, "message": message,
                             "errors": [{"message": message, "domain": domain,
                                         "reason": reason}],
                             "status": google_status}
    if detail_reason:
        error["details"] = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                             "reason": detail_reason, "domain": "googleapis.com"}]
    return Answer(status, {"error": error})


def _google_key_error(params: dict[str, str], headers: dict[str, str]) -> Answer | None:
    """Google takes the key as ``key`` or the ``X-Goog-Api-Key`` header."""
    key = params.get("key") or headers.get("x-goog-api-key")
    if not key:
        return _google_error(403, "Method doesn't allow unregistered callers (callers without "
                             "established identity). Please use API Key or other form of API "
                             "consumer identity to call this API.", "forbidden",
                             "PERMISSION_DENIED")
    if key == BAD_KEY:
        return _google_error(400, "API key not valid. Please pass a valid API key.",
                             "badRequest", "INVALID_ARGUMENT", "API_KEY_INVALID")
    return None


def google(path: str, params: dict[str, str], headers: dict[str, str]) -> Answer:
    query = params.get("q", "")
    refused = _google_key_error(params, headers)
    if refused:
        return refused
    num = int(params.get("num", "10"))
    if not params.get("cx") or not 1 <= num <= 10:
        return _google_error(400, "Request contains an invalid argument.", "badRequest",
                             "INVALID_ARGUMENT")
    if query == "fake:quota":
        return _google_error(429, "Quota exceeded for quota metric 'Queries' and limit "
                             "'Queries per day'.", "rateLimitExceeded", "RESOURCE_EXHAUSTED")
    if query == "fake:error":
        return _google_error(500, "Backend Error", "backendError", "INTERNAL")
    return _common(query, lambda: _google_page(query, num)) or _google_page(query, num)


def _google_page(query: str, num: int) -> Answer:
    body: dict[str, Any] = {"kind": "customsearch#search",
                            "queries": {"request": [{"searchTerms": query, "count": num}]}}
    if query == "fake:empty":
        body["searchInformation"] = {"totalResults": "0", "formattedTotalResults": "0"}
        return Answer(body=body)
    body["searchInformation"] = {"totalResults": "8690000", "formattedTotalResults": "8,690,000"}
    body["items"] = [
        {"kind": "customsearch#result", "title": _plain(title), "htmlTitle": title, "link": url,
         "displayLink": _host(url), "snippet": _plain(snippet), "htmlSnippet": snippet,
         "formattedUrl": url, "pagemap": {"metatags": [{"og:title": _plain(title)}]}}
        for url, title, snippet in WEB[:num]
    ]
    return Answer(body=body)


# --- YouTube Data API v3 -------------------------------------------------------------------

def youtube(path: str, params: dict[str, str], headers: dict[str, str]) -> Answer:
    refused = _google_key_error(params, headers)
    if refused:
        return refused
    if path == "/videos":
        if (params.get("key") or headers.get("x-goog-api-key")) == VIDEOS_QUOTA_KEY:
            return _youtube_quota()
        return Answer(body=_youtube_videos(params.get("id", "").split(",")))
    if path != "/search":
        return Answer(404, b"Not Found", "text/html")
    query = params.get("q", "")
    max_results = int(params.get("maxResults", "5"))
    if "snippet" not in params.get("part", "") or not 0 <= max_results <= 50:
        return _google_error(400, "Invalid value", "invalidParameter", "INVALID_ARGUMENT")
    if query == "fake:quota":
        return _youtube_quota()
    if query == "fake:error":
        return _google_error(500, "Backend Error", "backendError", "INTERNAL")
    return (_common(query, lambda: _youtube_search(query, max_results))
            or _youtube_search(query, max_results))


def _youtube_quota() -> Answer:
    return _google_error(403, "The request cannot be completed because you have exceeded your "
                         "<a href=\"/youtube/v3/getting-started#quota\">quota</a>.",
                         "quotaExceeded", "PERMISSION_DENIED", domain="youtube.quota")


def _youtube_search(query: str, max_results: int) -> Answer:
    items: list[dict[str, Any]] = []
    if query != "fake:empty":
        for url, title, channel, _, _, date in VIDEOS:
            video_id = next((v for v in YOUTUBE_VIDEOS if v in url), None)
            if video_id is None or any(i["id"].get("videoId") == video_id for i in items):
                continue
            items.append({"kind": "youtube#searchResult", "id": {
                "kind": "youtube#video", "videoId": video_id}, "snippet": {
                "publishedAt": date and (date if date.endswith("Z") else f"{date}Z"),
                "channelId": "UCuAXFkgsw1L7xaCfnd5JJOw", "title": title,
                "description": f"{_plain(title)} — official video.", "channelTitle": channel,
                "liveBroadcastContent": "none", "thumbnails": {
                    "default": {"url": f"https://i.ytimg.com/vi/{video_id}/default.jpg",
                                "width": 120, "height": 90},
                    "high": {"url": f"https://i.ytimg.com/vi/{video_id}/hqdefault.jpg",
                             "width": 480, "height": 360}}}})
        # type=video is a filter YouTube has been seen to miss: a channel among the videos
        items.insert(1, {"kind": "youtube#searchResult", "id": {
            "kind": "youtube#channel", "channelId": "UCuAXFkgsw1L7xaCfnd5JJOw"},
            "snippet": {"title": "Rick Astley", "channelTitle": "Rick Astley"}})
    return Answer(body={"kind": "youtube#searchListResponse", "regionCode": "US",
                        "nextPageToken": "CAUQAA", "items": items[:max_results],
                        "pageInfo": {"totalResults": 1000000,
                                     "resultsPerPage": min(max_results, len(items))}})


def _youtube_videos(ids: list[str]) -> dict[str, Any]:
    items = [{"kind": "youtube#video", "id": video_id,
              "contentDetails": {"duration": YOUTUBE_VIDEOS[video_id][0], "caption": "false"},
              "statistics": YOUTUBE_VIDEOS[video_id][1]}
             for video_id in ids if video_id in YOUTUBE_VIDEOS]
    return {"kind": "youtube#videoListResponse", "items": items,
            "pageInfo": {"totalResults": len(items), "resultsPerPage": len(items)}}


ROUTES: dict[str, Route] = {"searxng": searxng, "brave": brave, "google": google,
                            "youtube": youtube}


def main() -> None:
    name, port = sys.argv[1], int(sys.argv[2])
    FakeProvider(ROUTES[name], port).serve_forever()


if __name__ == "__main__":
    main()
