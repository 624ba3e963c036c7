"""The one small interface of a search provider, and everything providers share.

A provider module only says how to ask its API (endpoint, parameters, headers) and where each
field sits in the answer (:meth:`SearchProvider.fetch`). The rest is here, done once for all:
the pooled HTTP client with its timeout, turning transport failures, HTTP error bodies and
non-JSON answers into a :class:`ProviderError` with the provider's reason, and the
post-processing of results (HTML stripped, dates and durations normalised, duplicates
removed, cut to ``limit``, ranked from 1) so every provider answers in the same shape.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar

import urllib3

from api.search.normalise import (
    clean_text,
    dedupe_key,
    host_of,
    http_date,
    published_at,
    web_url,
)
from core.config import SearchConfig, VideoConfig
from core.numbers import parse_duration
from core.video_platform import API_KEY_HEADER

logger = logging.getLogger(__name__)

#: The kinds of search, one per operation: POST /search, /search/news, /search/videos.
KINDS = ("web", "news", "videos")
#: Sent with every provider request (urllib3 replaces, not merges, a pool's default headers
#: when a request has its own, so they are merged per request).
HEADERS = {"User-Agent": "webdata-platform/0.1 (search proxy)", "Accept": "application/json",
           "Accept-Encoding": "gzip"}
#: Countries whose Chinese is written in traditional script: providers that split Chinese by
#: script (zh-hans/zh-hant) are sent the traditional variant for these.
TRADITIONAL_CHINESE = frozenset({"tw", "hk", "mo"})
#: Longest provider reason put in an error message (error bodies can be whole HTML pages).
MAX_REASON = 300
#: Largest provider answer read, in bytes: a page of ten results is a few dozen KiB.
MAX_ANSWER_BYTES = 5 * 1024 * 1024
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class SearchQuery:
    """A validated request: ``country`` and ``language`` are two lowercase letters or None."""

    query: str
    limit: int = 10
    country: str | None = None
    language: str | None = None


class ProviderError(Exception):
    """The provider failed or refused; ``reason`` is safe to show to the API client."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Reply:
    """A provider's decoded JSON answer and when it was made (its ``Date`` header, which
    relative ages such as "5 minutes ago" are counted from; our clock when it has none)."""

    data: Any
    received_at: datetime


@dataclass
class Page:
    """What :meth:`SearchProvider.fetch` returns: the provider's results, best first, as dicts
    of raw values (HTML, duplicates and more than ``limit`` allowed) under these keys:
    ``url``, ``title``, ``snippet``; news ``source``, ``published_at``; videos ``channel``,
    ``duration`` (any notation of :func:`parse_duration`), ``thumbnail``, ``published_at``."""

    received_at: datetime
    results: list[dict[str, Any]] = field(default_factory=list)


class SearchProvider:
    """One search API. Instances are built once per app and shared by its request threads."""

    #: Configuration name (SEARCH_PROVIDER=…) and prefix of error messages.
    name: ClassVar[str]
    #: The kinds of :data:`KINDS` this provider can answer.
    supports: ClassVar[frozenset[str]]

    def __init__(self, base_url: str, *, timeout: float = 10.0):
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        # One pool per provider, as large as a gunicorn worker's thread count, so concurrent
        # requests reuse warm connections instead of paying a TCP (and TLS) handshake each.
        self.http = urllib3.PoolManager(num_pools=4, maxsize=16, retries=False)

    @classmethod
    def from_config(cls, search: SearchConfig, video: VideoConfig) -> SearchProvider | None:
        """The provider as the search section (and, for the platform's own search, the video
        section) sets it up; None when it is not configured, ValueError when it is
        half-configured (a deployment should fail at startup, not per request)."""
        raise NotImplementedError

    def search(self, kind: str, query: SearchQuery) -> list[dict[str, Any]]:
        """Results of the contract's shape for ``kind``; raises ProviderError."""
        if kind not in self.supports:
            raise ValueError(f"{self.name} does not support {kind} search")
        # No catch-all here: the provider's faults (transport, HTTP errors, bodies that are
        # not JSON, JSON of a shape the adapter checked for and refused) are ProviderErrors
        # raised where they are detected (get_json, results_of). Anything else an adapter
        # raises is a bug of ours: a 500 from the one error handler, with its traceback.
        return finish(kind, self.fetch(kind, query), query.limit)

    def fetch(self, kind: str, query: SearchQuery) -> Page:
        """Ask the provider; its results with raw values (see :class:`Page`)."""
        raise NotImplementedError

    def get_json(self, path: str, params: dict[str, Any],
                 headers: dict[str, str] | None = None) -> Reply:
        """GET ``base_url + path`` with ``params`` (None values left out); the decoded JSON.

        Every failure becomes a ProviderError whose reason says what went wrong in words a
        client can act on, and never holds the URL or the request headers (keys travel there).
        ``Timeout(total=…)`` bounds connecting and answering together, not each step apart.
        """
        fields = {name: str(value) for name, value in params.items() if value is not None}
        deadline = time.monotonic() + self.timeout
        try:
            response = self.http.request(
                "GET", self.base_url + path, fields=fields, headers={**HEADERS, **(headers or {})},
                timeout=urllib3.Timeout(total=self.timeout), retries=False,
                preload_content=False,
            )
            body = _read_until(response, deadline)
        except urllib3.exceptions.NewConnectionError as exc:  # before: it is a TimeoutError
            logger.warning("%s: could not connect: %r", self.name, exc)
            raise ProviderError(_transport_reason(exc)) from None
        except (urllib3.exceptions.TimeoutError, TimeoutError):
            logger.warning("%s: no answer within %s s", self.name, self.timeout)
            raise ProviderError(f"no answer within {self.timeout:g} s") from None
        except urllib3.exceptions.HTTPError as exc:
            logger.warning("%s: request failed: %r", self.name, exc)
            raise ProviderError(_transport_reason(exc)) from None
        received_at = http_date(response.headers.get("Date")) or datetime.now(UTC)
        if not 200 <= response.status < 300:
            reason = error_reason(body) or response.reason or ""
            logger.warning("%s answered HTTP %s: %s", self.name, response.status, reason)
            raise ProviderError(f"HTTP {response.status}" + (f": {reason}" if reason else ""))
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):  # RecursionError: nested past Python's stack
            content_type = response.headers.get("Content-Type") or "no content type"
            logger.warning("%s answered with a body that is not JSON (%s)", self.name,
                           content_type)
            raise ProviderError(f"the answer is not valid JSON ({content_type})") from None
        if not isinstance(data, dict):
            raise ProviderError("the answer is not a JSON object")
        return Reply(data, received_at)


def _read_until(response: urllib3.BaseHTTPResponse, deadline: float) -> bytes:
    """The whole body, read against ``deadline``: urllib3's timeouts bound each socket read,
    not the total, so a provider that drips its answer would otherwise hold the request
    thread for as long as it likes. Over MAX_ANSWER_BYTES is a provider error too. An
    abandoned answer closes its connection rather than draining what was refused."""
    chunks: list[bytes] = []
    size = 0
    try:
        while chunk := response.read1(_CHUNK):  # at most one socket read per call
            size += len(chunk)
            if size > MAX_ANSWER_BYTES:
                raise ProviderError(f"the answer is larger than {MAX_ANSWER_BYTES} bytes")
            if time.monotonic() > deadline:
                raise TimeoutError("provider answer past the deadline")
            chunks.append(chunk)
    except BaseException:
        response.close()
        raise
    response.release_conn()
    return b"".join(chunks)


def results_of(container: object, key: str) -> list[dict[str, Any]]:
    """``container[key]`` as a list of objects: absent or null is no results (Brave leaves out
    ``web``, Google ``items``, when nothing was found); any other shape is a provider error."""
    value = container.get(key) if isinstance(container, dict) else None
    if value is None:
        return []
    if not isinstance(value, list):
        raise ProviderError(f"unexpected answer: '{key}' is not a list")
    return [item for item in value if isinstance(item, dict)]




def error_reason(body: bytes) -> str | None:
    """The provider's reason from an HTTP error body: JSON (see :func:`json_error_reason`), or a
    short plain-text body as it is (an HTML page says nothing useful and gives None)."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        text = body.decode("utf-8", "replace").strip()
        return _short(text) if text and not text.startswith("<") else None
    return json_error_reason(data)


def json_error_reason(data: object) -> str | None:
    """The provider's reason from a decoded error body, in every documented shape:

    SearXNG ``{"error": "No query"}``; Brave ``{"error": {"code", "detail"}}`` or
    ``{"errors": [{…}]}``; Google and YouTube ``{"error": {"message", "errors": [{"reason"}],
    "status", "details": [{"reason"}]}}``. The message comes first, then the machine codes in
    brackets: "Quota exceeded. (rateLimitExceeded)".
    """
    if not isinstance(data, dict):
        return None
    errors = data.get("error")
    errors = [errors] if errors is not None else data.get("errors")
    if not isinstance(errors, list):
        return None
    messages: list[str] = []
    codes: list[str] = []
    for error in errors:
        if isinstance(error, str):
            messages.append(error)
        elif isinstance(error, dict):
            messages += [error[k] for k in ("detail", "message") if isinstance(error.get(k), str)]
            codes += [error["code"]] if isinstance(error.get("code"), str) else []
            for item in [*_list(error.get("errors")), *_list(error.get("details"))]:
                codes += [item["reason"]] if isinstance(item.get("reason"), str) else []
    message = (clean_text(messages[0]) or "") if messages else ""  # YouTube's hold <a> tags
    codes = list(dict.fromkeys(codes))
    text = f"{message} ({', '.join(codes)})" if codes else message
    return _short(text.strip()) or None


def google_key_header(api_key: str) -> dict[str, str]:
    """The key of a Google API (CSE, YouTube) as a header (see ``API_KEY_HEADER``)."""
    return {API_KEY_HEADER: api_key}


def finish(kind: str, page: Page, limit: int) -> list[dict[str, Any]]:
    """The contract's results from a provider's raw ones: kept in the provider's order, only
    those with an http(s) URL, each page once (first occurrence wins), at most ``limit``,
    ``position`` from 1, every field present (None when unknown)."""
    results: list[dict[str, Any]] = []
    seen: set[str] = set()
    for raw in page.results:
        url = web_url(raw.get("url"))
        if url is None or (key := dedupe_key(url)) in seen:
            continue
        seen.add(key)
        result = {"position": len(results) + 1, "url": url,
                  "title": clean_text(raw.get("title")), "snippet": clean_text(raw.get("snippet"))}
        if kind == "news":
            result["source"] = clean_text(raw.get("source")) or host_of(url)
            result["published_at"] = published_at(raw.get("published_at"), page.received_at)
        elif kind == "videos":
            result.update(
                channel=clean_text(raw.get("channel")),
                duration_seconds=parse_duration(raw.get("duration")),
                thumbnail=web_url(raw.get("thumbnail")),
                published_at=published_at(raw.get("published_at"), page.received_at),
                engagement=None,
            )
        results.append(result)
        if len(results) >= limit:
            break
    return results


def _list(value: object) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_REASON else text[:MAX_REASON - 1] + "…"


def _transport_reason(exc: urllib3.exceptions.HTTPError) -> str:
    if isinstance(exc, urllib3.exceptions.SSLError):
        return "TLS error"
    if isinstance(exc, urllib3.exceptions.NameResolutionError):
        return "could not resolve the provider's host name"
    if isinstance(exc, urllib3.exceptions.NewConnectionError):
        return "could not connect"
    return "the connection failed"
