"""The single-page spider every one-URL operation is built on."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from scrapy import Request, Spider
from scrapy.http import HtmlResponse

from core.cache import storable
from core.contract import PageStatus
from core.controls import control_character_error, escaped
from core.items import NOT_MODIFIED, PageResult, ResponseCaching
from core.policy import ALLOWED_SCHEMES, ascii_url
from core.selectors import SelectorBudgetExceeded
from crawler.exceptions import (
    CrawlError,
    ExtractionFailed,
    InvalidUrl,
    SourcePolicyError,
    UnsupportedContent,
)
from crawler.extract.fetched import FetchedPage
from crawler.failures import classify

if TYPE_CHECKING:
    from scrapy.http import Response
    from twisted.python.failure import Failure


def response_caching(response: Response) -> ResponseCaching:
    """What ``response``'s headers say about keeping its answer (:mod:`core.cache`)."""

    def header(name: str) -> str | None:
        value = response.headers.get(name)
        return value.decode("latin-1").strip() or None if value else None

    return ResponseCaching(storable=storable(header("Cache-Control")), etag=header("ETag"),
                           last_modified=header("Last-Modified"))


def as_bool(value: Any) -> bool:
    """Spider arguments come as strings from ``scrapy crawl -a``: ``"false"`` is False."""
    if isinstance(value, str):
        return value.strip().lower() not in {"", "0", "false", "no", "off"}
    return bool(value)


def as_http_url(spider: str, url: str | None, what: str = "the page") -> str:
    """``-a url=…`` as an http(s) URL with a host and no control character, its host in ASCII
    (see :func:`~core.policy.ascii_url`); a clear ``ValueError`` naming ``spider``
    otherwise (the URL in it as ``repr`` shows it: escaped), raised when the spider is made
    rather than as a failed fetch later."""
    if not url or not url.strip():
        raise ValueError(f"{spider}: pass {what} with -a url=…")
    refused = control_character_error(url)
    if refused:
        raise ValueError(f"{spider}: {url!r} is not a valid URL: {refused}")
    try:
        parts = urlsplit(ascii_url(url.strip()))
        valid = parts.scheme.lower() in ALLOWED_SCHEMES and bool(parts.hostname)
    except ValueError:
        valid = False
    if not valid:
        raise ValueError(f"{spider}: {url!r} is not an http(s) URL")
    return urlunsplit(parts)


def as_whole_number(spider: str, name: str, value: Any, minimum: int = 0) -> int:
    """``-a name=…`` as an integer of at least ``minimum``; a clear ``ValueError`` otherwise."""
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{spider}: {name} must be a whole number, not {value!r}") from None
    if number < minimum or (isinstance(value, float) and value != number):
        raise ValueError(f"{spider}: {name} must be a whole number of at least {minimum}, "
                         f"not {value!r}")
    return number


def fetched_page(url: str, response: HtmlResponse) -> FetchedPage:
    """What extractors take: the page asked for as ``url``, as ``response`` delivered it
    (headers as ``str`` → first value)."""
    headers = {k.decode("latin-1"): v[0].decode("latin-1")
               for k, v in response.headers.items() if v}
    return FetchedPage(url=url, html=response.text, final_url=response.url,
                       status=response.status, headers=headers)


class SinglePageSpider(Spider):
    """Fetches ``url`` (``-a url=…``), yields exactly one :class:`PageResult`.

    Subclasses implement :meth:`extract`, a call to a pure function of :mod:`crawler.extract`
    on the fetched page.
    Only HTML is accepted; every failure becomes a failed result with a stable error code,
    including a bug in the extractor (``internal_error``, logged with its traceback): without
    a result the job would report "no result" as if the fetch had failed.
    """

    def __init__(self, url: str | None = None, *args: Any, if_none_match: str | None = None,
                 if_modified_since: str | None = None, report_caching: Any = False,
                 **kwargs: Any):
        super().__init__(*args, **kwargs)
        if not url:
            raise ValueError(f"{self.name}: pass the page with -a url=…")
        self.url = url
        #: A cached answer's validators: the page is asked for conditionally, and a 304 is a
        #: result of its own (:data:`~core.items.NOT_MODIFIED`, no data).
        self.validators = {name: value for name, value in (
            ("If-None-Match", if_none_match), ("If-Modified-Since", if_modified_since))
            if value}
        #: Yield the response's :class:`~core.items.ResponseCaching` after its result.
        self.report_caching = as_bool(report_caching)

    def refused_url(self) -> CrawlError | None:
        """The failure of a URL the API would refuse as invalid: one with a control character
        (:func:`~core.controls.control_character_error`), which is never requested."""
        refused = control_character_error(self.url)
        return InvalidUrl(refused, url=self.url) if refused else None

    async def start(self) -> AsyncIterator[Request | PageResult]:
        refused = self.refused_url()
        if refused is not None:
            yield self._failure(refused, None)
            return
        try:
            # faß.de is xn--fa-hia.de, as the policy judged it (Scrapy alone would fetch fass.de)
            request = Request(ascii_url(self.url), callback=self.parse, errback=self.failed,
                              dont_filter=True, headers=self.validators or None,
                              meta={"handle_httpstatus_list": [NOT_MODIFIED]}
                              if self.validators else None)
        except ValueError as exc:  # no scheme, a malformed host or port: nothing to fetch
            # the page's one result, as for any other URL refused (not Scrapy's traceback,
            # an empty output and, for a job, no result at all)
            yield self._failure(SourcePolicyError(
                f"Only http and https URLs with a valid host are fetched ({exc}).",
                url=self.url), None)
            return
        yield request

    def extract(self, page: FetchedPage) -> Any:
        raise NotImplementedError

    def parse(self, response: Response) -> Iterator[PageResult | ResponseCaching]:
        if self.report_caching:  # before the result, which completes a fed job
            yield response_caching(response)
        yield from self.results(response)

    def results(self, response: Response) -> Iterator[PageResult]:
        """The page's result (see the class)."""
        if response.status == NOT_MODIFIED and self.validators:
            yield PageResult(url=self.url, status=PageStatus.SUCCEEDED, final_url=response.url,
                             status_code=NOT_MODIFIED)
            return
        if not isinstance(response, HtmlResponse):
            ctype = response.headers.get("Content-Type", b"").decode("latin-1") or "unknown"
            error = UnsupportedContent(f"The target is not HTML ({ctype}).", url=response.url)
            yield self._failure(error, response)
            return
        try:
            data = self.extract(fetched_page(self.url, response))
        except CrawlError as error:
            yield self._failure(error, response)
            return
        except SelectorBudgetExceeded as exc:  # the client's selectors, on this page
            yield self._failure(UnsupportedContent(str(exc), url=response.url), response)
            return
        except Exception:
            self.logger.exception("Extraction failed on %s", escaped(response.url))
            yield self._failure(ExtractionFailed(
                "The page could not be processed; nothing was charged.", url=response.url),
                response)
            return
        yield PageResult(
            url=self.url,
            status=PageStatus.SUCCEEDED,
            final_url=response.url,
            status_code=response.status,
            data=data,
        )

    def failed(self, failure: Failure) -> Iterator[PageResult]:
        error = classify(failure, failure.request.url if hasattr(failure, "request") else self.url)
        response = getattr(failure.value, "response", None)
        yield self._failure(error, response)

    def _failure(self, error: CrawlError, response: Response | None) -> PageResult:
        self.logger.info("Failed %s: %s %s", escaped(self.url), error.code,
                         escaped(error.message))
        return PageResult(
            url=self.url,
            status=PageStatus.FAILED,
            final_url=response.url if response is not None else None,
            status_code=response.status if response is not None else None,
            error=error.as_dict(),
        )
