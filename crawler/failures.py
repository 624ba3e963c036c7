"""Classify a failure: whatever a failed download raised becomes one
:class:`~crawler.exceptions.CrawlError` (the exceptions themselves live in
:mod:`crawler.exceptions`, as Scrapy keeps its own in ``scrapy.exceptions``).

Scrapy and Twisted report failures as a zoo of exception types (and the size limit only by
message); this is the one place that knows them, so spiders and the API see stable codes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from scrapy import exceptions as scrapy_errors
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.internet import defer
from twisted.internet import error as net
from twisted.web.client import ResponseFailed, ResponseNeverReceived

from crawler.exceptions import (
    CrawlError,
    CrawlTimeout,
    FetchFailed,
    PageTooLarge,
    SourcePolicyError,
    TargetHTTPError,
)
from crawler.resolver import installed_resolver

if TYPE_CHECKING:
    from twisted.python.failure import Failure

TIMEOUTS = (
    scrapy_errors.DownloadTimeoutError,
    net.TimeoutError,
    net.TCPTimedOutError,
    defer.TimeoutError,
)
UNRESOLVED = (scrapy_errors.CannotResolveHostError, net.DNSLookupError)
#: Both the download handler ("larger than download max size") and the decompression
#: middleware ("exceeded DOWNLOAD_MAXSIZE") say it only in words.
TOO_LARGE_MARKERS = ("download max size", "DOWNLOAD_MAXSIZE")


def _host(url: str) -> str:
    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""


def _unresolved(url: str) -> CrawlError:
    resolver = installed_resolver()
    reason = resolver.refusal(_host(url)) if resolver else None
    if reason:
        return SourcePolicyError(f"Refused by source policy: {reason}.", url=url)
    return FetchFailed(f"The host name could not be resolved: {_host(url)}.", url=url)


def _broken_connection(exc: BaseException) -> str:
    """In words, what Scrapy reports as ``DownloadFailedError("[<twisted.python.failure…>]")``:
    Twisted's ResponseFailed, whose text is the repr of a list of Failures."""
    cause = exc.__cause__ if isinstance(exc, scrapy_errors.DownloadFailedError) else exc
    for reason in getattr(cause, "reasons", None) or []:
        if type(getattr(reason, "value", None)).__module__.startswith("OpenSSL"):
            return "The TLS handshake with the target failed."
    if isinstance(cause, ResponseNeverReceived):
        return "The target closed the connection without answering."
    return "The connection to the target broke while it was answering."


def classify(failure: Failure, url: str) -> CrawlError:
    """The client-facing error for a failure while fetching ``url``."""
    exc = failure.value
    text = str(exc)
    if isinstance(exc, CrawlError):
        exc.url = exc.url or url
        return exc
    if isinstance(exc, HttpError):
        status = exc.response.status
        return TargetHTTPError(
            f"The target answered HTTP {status}.", url=exc.response.url, target_status=status
        )
    if any(marker in text for marker in TOO_LARGE_MARKERS):
        return PageTooLarge("The page is larger than the size limit.", url=url)
    if isinstance(exc, UNRESOLVED):
        return _unresolved(url)
    if isinstance(exc, TIMEOUTS):
        return CrawlTimeout("The target did not answer in time.", url=url)
    if isinstance(exc, scrapy_errors.UnsupportedURLSchemeError | scrapy_errors.NotSupported):
        return SourcePolicyError(f"Not fetched: {text}", url=url)
    if isinstance(exc, scrapy_errors.DownloadConnectionRefusedError | net.ConnectionRefusedError):
        return FetchFailed("The target refused the connection.", url=url)
    if isinstance(exc, scrapy_errors.IgnoreRequest) and "redirect" in text:
        return FetchFailed("Too many redirects.", url=url)
    if isinstance(exc, scrapy_errors.DownloadFailedError | ResponseFailed):
        return FetchFailed(_broken_connection(exc), url=url)
    if isinstance(exc, scrapy_errors.ResponseDataLossError):
        return FetchFailed("The target's answer was cut short.", url=url)
    if isinstance(exc, net.ConnectError | net.ConnectionLost):
        return FetchFailed("The connection to the target failed.", url=url)
    # Anything else: its words if they are words, never a repr of Twisted's objects.
    plain = text and "<" not in text and "twisted" not in text.lower() and len(text) < 300
    detail = text if plain else type(exc).__name__
    return FetchFailed(f"The fetch failed: {detail}", url=url)
