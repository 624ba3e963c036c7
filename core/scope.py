"""Which discovered links a crawl follows: its start URL's site, a depth, path filters.

The rules of ``POST /collections`` in ``mode: crawl`` (docs/api.md, Collections): a crawl
stays on its start URL's site (``www.`` and the bare host are one site,
:func:`core.canonical.site_key`);
depth counts link hops from the start URL (not path segments: a common misreading users
complain about); ``include_paths``/``exclude_paths`` are regexes in RE2's syntax searched in the
path + query (:mod:`core.patterns`: linear time, whatever the pattern).

Pure and Scrapy-free: the API validates patterns with
:func:`~core.patterns.pattern_errors` (a 422 naming each bad one) before the frontier ever
builds a :class:`CrawlScope`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cached_property
from urllib.parse import urlsplit

from w3lib.url import safe_url_string

from core.canonical import canonical_url, same_site
from core.contract import SkipReason
from core.controls import control_character_error
from core.patterns import Pattern, compile_patterns, search_any
from core.policy import ALLOWED_SCHEMES

logger = logging.getLogger(__name__)

#: The ``Request.meta`` key of a crawl's page: the crawl's start URL. A redirect (or meta
#: refresh) off that site is refused (:class:`crawler.middlewares.SourcePolicyMiddleware`).
CRAWL_SITE = "webdata_crawl_site"


def page_url_error(value: str) -> str | None:
    """Why ``value`` could never be a page of a collection (a batch entry, a crawl's start),
    in words; None when it could. It must be an http(s) URL with a host, no credentials
    (never fetched with, logged or stored) and no control character (anywhere, surrounding
    spaces included: :func:`~core.controls.control_character_error`), that Scrapy can
    request: ``safe_url_string`` reads its brackets and its port as ``scrapy.Request`` does,
    where a malformed one would fail the page later. The API (422) and batch code
    (``ValueError``) both ask this."""
    refused = control_character_error(value)
    if refused:
        return refused
    text = value.strip()
    try:
        parts = urlsplit(text)
        safe_url_string(text)
    except ValueError as exc:
        return f"Not a valid URL: {exc}."
    if parts.scheme.lower() not in ALLOWED_SCHEMES:
        return "Must be an http or https URL."
    if not parts.hostname:
        return "Must name a host, such as https://example.com/."
    if "@" in parts.netloc:
        return "Must not contain credentials (user:password@)."
    return None


@dataclass(frozen=True)
class CrawlScope:
    """The link-following rules of one crawl.

    ``start_url``: where the crawl starts (its site is the crawl's site); ``max_depth``: most
    link hops from the start URL a followed page may be (sitemap URLs count as 1);
    ``include_paths``: when given, a followed URL's path + query must match one of them
    (an RE2 search, :mod:`core.patterns`); ``exclude_paths``: it must match none. Patterns
    are compiled once, here: a bad one raises ``ValueError`` (validate with
    :func:`~core.patterns.pattern_errors` first).
    """

    start_url: str
    max_depth: int
    include_paths: tuple[str, ...] = ()
    exclude_paths: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Lists (from JSON) become tuples: a frozen scope is hashable and cannot change.
        object.__setattr__(self, "include_paths", tuple(self.include_paths))
        object.__setattr__(self, "exclude_paths", tuple(self.exclude_paths))
        _ = self._include, self._exclude  # compiled now: a bad pattern fails here, not mid-crawl

    # cached_property writes the instance's __dict__ directly, which a frozen dataclass allows;
    # and unlike extra fields these stay out of asdict(), replace() and equality.
    @cached_property
    def _include(self) -> tuple[Pattern, ...]:
        return compile_patterns(self.include_paths, "include_paths")

    @cached_property
    def _exclude(self) -> tuple[Pattern, ...]:
        return compile_patterns(self.exclude_paths, "exclude_paths")

    @cached_property
    def _start(self) -> str:
        return canonical_url(self.start_url)

    def follows(self, url: str, depth: int) -> bool:
        """Whether a link to ``url`` found ``depth`` hops from the start URL is admitted.

        Admitted: an http(s) URL of the start URL's site, at most ``max_depth`` hops away,
        whose path + query (``/docs/a?x=1``, of its :func:`~core.canonical.canonical_url`:
        sorted query, tracking parameters gone) is matched by an include pattern when there are
        any, and by no exclude pattern.

        The start URL itself (in any spelling with the same canonical form) is always
        admitted, whatever the patterns say: a crawl fetches at least the page it was asked
        for, and its links are how it finds the pages the patterns do want.
        """
        return self.refusal(url, depth) is None

    def refusal(self, url: str, depth: int, canonical: str | None = None) -> SkipReason | None:
        """Why a link to ``url`` found ``depth`` hops away is not followed (None: it is; see
        :meth:`follows`). What the URL is decides first (``off_site``, ``not_included``,
        ``excluded_path``), then where it was found (``depth``): a URL refused for what it is
        is refused wherever it turns up. ``canonical``: ``url``'s canonical form, if known."""
        canonical = canonical if canonical is not None else canonical_url(url)
        if canonical == self._start:
            return None
        try:
            parts = urlsplit(canonical)
        except ValueError:
            return SkipReason.OFF_SITE
        if parts.scheme not in ALLOWED_SCHEMES or not same_site(canonical, self._start):
            return SkipReason.OFF_SITE
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        if self._include and not search_any(self._include, target):
            return SkipReason.NOT_INCLUDED
        if search_any(self._exclude, target):
            return SkipReason.EXCLUDED_PATH
        if depth > self.max_depth:
            return SkipReason.DEPTH
        return None
