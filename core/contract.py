"""Values the HTTP contract fixes, shared by the crawler and the API: the stable error codes
and the statuses of a page result.

Dependency-light on purpose (standard library only), so the API process imports it without
Scrapy. ``StrEnum`` members are ``str`` instances: they serialise to JSON, go to Redis and to
the database as their plain values, and compare equal to them (``ErrorCode.TIMEOUT ==
"timeout"``), so code and tests may keep writing the strings.
"""

from __future__ import annotations

from enum import StrEnum

#: Where the API's operations are served (its OpenAPI ``servers`` path).
BASE_PATH = "/api/service/v1"

#: A collection's webhook events (docs/api.md, Webhooks): the one of each final status, its
#: start (queued → running), each page it stored; what ``webhook_events`` may list, and what
#: a collection asks for without it (its end's).
END_EVENTS = {"completed": "collection.completed", "cancelled": "collection.cancelled",
              "failed": "collection.failed"}
STARTED_EVENT, PAGE_EVENT = "collection.started", "collection.page"
COLLECTION_EVENTS = (STARTED_EVENT, PAGE_EVENT, *END_EVENTS.values())
DEFAULT_EVENTS = tuple(END_EVENTS.values())
#: An account's event: its balance fell below its ``low_balance_threshold``.
LOW_BALANCE_EVENT = "account.low_balance"


class ErrorCode(StrEnum):
    """Every ``error`` value the API answers with (docs/api.md, Errors; ``api.errors.STATUS`` gives
    each its HTTP status, ``crawler.exceptions`` raises the fetch-related ones)."""

    BAD_REQUEST = "bad_request"
    UNAUTHORIZED = "unauthorized"
    INSUFFICIENT_CREDITS = "insufficient_credits"
    SOURCE_POLICY = "source_policy"
    ROBOTS_DISALLOWED = "robots_disallowed"
    NOT_FOUND = "not_found"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    CONFLICT = "conflict"
    EXPIRED = "expired"
    TOO_MANY_URLS = "too_many_urls"
    BODY_TOO_LARGE = "body_too_large"
    UNSUPPORTED_CONTENT = "unsupported_content"
    VALIDATION_ERROR = "validation_error"
    IDEMPOTENCY_KEY_REUSED = "idempotency_key_reused"
    UNSUPPORTED_VIDEO = "unsupported_video"
    VIDEO_UNAVAILABLE = "video_unavailable"
    RATE_LIMITED = "rate_limited"
    COLLECTION_LIMIT = "collection_limit"
    MONITOR_LIMIT = "monitor_limit"
    INTERNAL_ERROR = "internal_error"
    FETCH_FAILED = "fetch_failed"
    TARGET_HTTP_ERROR = "target_http_error"
    PAGE_TOO_LARGE = "page_too_large"
    SEARCH_PROVIDER_ERROR = "search_provider_error"
    SEARCH_NOT_CONFIGURED = "search_not_configured"
    UNAVAILABLE = "unavailable"
    TIMEOUT = "timeout"


class PageStatus(StrEnum):
    """``status`` of a page result (``core.items.PageResult``)."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"


#: What a collection is: a batch of URLs, or a crawl of one site.
COLLECTION_MODES = ("batch", "crawl")
#: Link hops a crawl follows when not told (API, batch code, ``scrapy crawl site``), and the
#: most it may be told.
DEFAULT_MAX_DEPTH = 3
MAX_DEPTH = 20


class SkipReason(StrEnum):
    """Why a URL a collection saw was not fetched (``GET /collections/{id}/skipped``,
    ``progress.skipped``; docs/api.md, Skipped URLs)."""

    ROBOTS = "robots"  #: robots.txt disallows it
    EXCLUDED_PATH = "excluded_path"  #: an ``exclude_paths`` pattern matches it
    NOT_INCLUDED = "not_included"  #: no ``include_paths`` pattern matches it
    DEPTH = "depth"  #: found more than ``max_depth`` hops from the start URL
    OFF_SITE = "off_site"  #: another site than the start URL's
    DUPLICATE = "duplicate"  #: fetched, and another page claimed its address first
    LIMIT = "limit"  #: admitted past ``max_pages``, never reached
    POLICY = "policy"  #: the source policy refuses it
    CANCELLED = "cancelled"  #: waiting when the collection was cancelled


#: Every reason, in the order the API lists them.
SKIP_REASONS = tuple(SkipReason)
#: The errors of a fetch that make a crawl's link a skip, not a failed result: what refused
#: it was only known at fetch time (docs/api.md, Skipped URLs).
FETCH_REFUSALS = {ErrorCode.ROBOTS_DISALLOWED: SkipReason.ROBOTS,
                  ErrorCode.SOURCE_POLICY: SkipReason.POLICY}
