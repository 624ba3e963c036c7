"""The links of a page a crawler may follow, and the one rule for what a usable link is.

:func:`link_url` is that rule, shared with the ``links`` of ``/scrape``
(:mod:`crawler.extract.page`): an href becomes an absolute http(s) URL without fragment, or
nothing. :func:`page_links` applies it for a crawl, which also honours what the page asks of
robots: ``rel=nofollow`` anchors and ``<meta name="robots" content="nofollow">`` are not
followed (``/scrape`` still lists such links, marked, because it describes the page).

Pure functions, no network: tested on saved HTML like every extractor.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

from lxml.html import HtmlElement
from w3lib.html import strip_html5_whitespace

from crawler.extract.fetched import FetchedPage
from crawler.extract.structured import join

logger = logging.getLogger(__name__)

_HOSTNAME = re.compile(r"[a-z0-9._-]+|[0-9a-f:.]+")  # after IDNA encoding; IPv6 unbracketed
#: ``<meta name="robots">`` values that forbid following the page's links ("none" is
#: "noindex, nofollow").
_NOFOLLOW_DIRECTIVES = frozenset({"nofollow", "none"})


@dataclass(frozen=True)
class PageLinks:
    """What a crawl learns from one page about where to go next.

    ``links``: absolute http(s) URLs to follow, in document order, each once, without
    fragment (not canonicalised: the frontier does that on admission). ``canonical``: the
    page's absolute ``<link rel="canonical">`` http(s) URL, ``None`` without a usable one: a
    page whose canonical URL was already stored is a duplicate.
    """

    links: tuple[str, ...]
    canonical: str | None


def link_url(base: str, href: str | None) -> str | None:
    """``href`` resolved against ``base`` as a URL a crawler can request, or ``None``.

    ``None`` for an empty href, a fragment of the page itself (``#top``), another scheme than
    http(s) (``javascript:``, ``mailto:``, ``tel:``, ``data:`` keep theirs through urljoin), a
    port 0 or out of range, a host that is no host name or IP address. The fragment is
    removed: it names a place in a page, not another page.
    """
    if not href or strip_html5_whitespace(href).startswith("#"):
        return None
    try:
        parts = urlsplit(join(base, href) or "")
        # reading .port validates it: out-of-range ports raise ValueError
        if (parts.scheme not in ("http", "https") or parts.port == 0
                or not _HOSTNAME.fullmatch(parts.hostname or "")):
            return None
    except ValueError:
        return None
    return parts._replace(fragment="").geturl()


def anchors(root: HtmlElement, base: str) -> Iterator[tuple[HtmlElement, str]]:
    """Each ``<a>`` with a usable href (:func:`link_url`) and that URL, in document order."""
    for anchor in root.iter("a"):
        url = link_url(base, anchor.get("href"))
        if url is not None:
            yield anchor, url


def rel_values(element: HtmlElement) -> list[str]:
    """The ``rel`` keywords of an element, lower-case (``rel="UGC NoFollow"``)."""
    return (element.get("rel") or "").lower().split()


def canonical_href(root: HtmlElement) -> str | None:
    """The raw href of the first ``<link rel="canonical">``, as written in the page."""
    return next((link.get("href") for link in root.xpath("//link[@href]")
                 if "canonical" in rel_values(link)), None)


def page_links(page: FetchedPage) -> PageLinks:
    """The links of ``page`` a crawl follows, and its canonical URL (see :class:`PageLinks`).

    Resolved against the page's address after redirects and its ``<base href>``. Anchors with
    ``rel=nofollow`` are skipped (a later followable anchor to the same URL still counts);
    a ``<meta name="robots">`` with ``nofollow`` (or ``none``) means no links at all, though
    the canonical URL is still read.
    """
    root = page.root
    if root is None:
        return PageLinks(links=(), canonical=None)
    canonical = link_url(page.base, canonical_href(root))
    if _NOFOLLOW_DIRECTIVES & set(re.split(r"[\s,]+", page.meta[0].get("robots", "").lower())):
        return PageLinks(links=(), canonical=canonical)
    urls = (url for anchor, url in anchors(root, page.base)
            if "nofollow" not in rel_values(anchor))
    return PageLinks(links=tuple(dict.fromkeys(urls)), canonical=canonical)
