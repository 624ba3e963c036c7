"""Why a fetch failed, as one exception per stable error code of the HTTP contract.

Spiders turn every failure into one of these (see :func:`crawler.failures.classify`), items carry
its ``code`` and message, and the API maps the code to an HTTP status in one table. Those raised
inside the download chain also subclass :class:`~scrapy.exceptions.IgnoreRequest`, so Scrapy
drops the request quietly and hands the failure to the request's errback.
"""

from __future__ import annotations

from typing import Any

from scrapy.exceptions import IgnoreRequest

from core.contract import ErrorCode


class CrawlError(Exception):
    """Base class: a fetch that failed for a reason the client should be told."""

    code: ErrorCode = ErrorCode.FETCH_FAILED

    def __init__(self, message: str, *, url: str | None = None, target_status: int | None = None):
        super().__init__(message)
        self.message = message
        self.url = url
        self.target_status = target_status

    def as_dict(self) -> dict[str, Any]:
        """The ``error`` object stored in a failed page result."""
        return {
            "error": self.code,
            "message": self.message,
            "details": {"url": self.url, "target_status": self.target_status},
        }


class SourcePolicyError(CrawlError, IgnoreRequest):
    """Raised by :class:`crawler.middlewares.SourcePolicyMiddleware` (and reported for hosts the
    filtering resolver refused): the URL is not http(s), or its address or port is not public."""

    code = ErrorCode.SOURCE_POLICY


class OffSiteRedirect(CrawlError, IgnoreRequest):
    """Raised for a crawl's page that redirects to another site: the crawl stays on its own,
    so that hop is not followed (fetched, stored or charged)."""

    code = ErrorCode.FETCH_FAILED


class RobotsDisallowed(CrawlError, IgnoreRequest):
    """Raised by :class:`crawler.middlewares.SharedRobotsTxtMiddleware` for disallowed URLs."""

    code = ErrorCode.ROBOTS_DISALLOWED


class FetchFailed(CrawlError):
    """DNS failure, refused or reset connection, TLS error, too many redirects."""

    code = ErrorCode.FETCH_FAILED


class TargetHTTPError(CrawlError):
    """The target answered with a status outside 2xx."""

    code = ErrorCode.TARGET_HTTP_ERROR


class PageTooLarge(CrawlError):
    """The body (after decompression) is over ``DOWNLOAD_MAXSIZE``."""

    code = ErrorCode.PAGE_TOO_LARGE


class UnsupportedContent(CrawlError):
    """The target is not HTML (PDF, image, JSON…)."""

    code = ErrorCode.UNSUPPORTED_CONTENT


class CrawlTimeout(CrawlError):
    """The target did not answer within ``DOWNLOAD_TIMEOUT``, or the crawl ran past its budget."""

    code = ErrorCode.TIMEOUT


class InvalidUrl(CrawlError):
    """The URL is one the API refuses as invalid (422), met where no schema checked it: a
    control character in ``scrapy crawl page -a url=…`` or a job enqueued by batch code. No
    request is made for it."""

    code = ErrorCode.VALIDATION_ERROR


class InvalidOption(CrawlError):
    """An option value the API would refuse with a 422 (``scrapy crawl page -a formats=pdf``,
    batch code's job): the page is not fetched."""

    code = ErrorCode.VALIDATION_ERROR


class UnsupportedVideo(CrawlError):
    """The link is not one of the supported video platform's video links (checked before any
    fetch, by the API and by the ``video`` spider)."""

    code = ErrorCode.UNSUPPORTED_VIDEO


class ExtractionFailed(CrawlError):
    """Our extraction code failed on a page it fetched: a bug, logged with its traceback by the
    spider. The client gets a 500 and is not charged, never a blank result billed as data."""

    code = ErrorCode.INTERNAL_ERROR


class VideoUnavailable(CrawlError):
    """Raised by :mod:`crawler.extract.video`: the video is private, deleted, age-gated, not
    playable or not embeddable (only public, embeddable videos are served)."""

    code = ErrorCode.VIDEO_UNAVAILABLE
