"""Shared reading of HTML for every extractor: parsing, URL joining, JSON-LD and microdata.

Pure helpers (no network, no Scrapy). Each extractor in this package reads the page through
these, so a quirk fixed here (a broken JSON-LD script, a bad ``<base href>``) is fixed for all.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

from extruct import JsonLdExtractor, MicrodataExtractor
from lxml import etree
from lxml.html import HtmlElement, document_fromstring
from w3lib.html import strip_html5_whitespace
from w3lib.url import safe_url_string

logger = logging.getLogger(__name__)

_JSON_LD = JsonLdExtractor()
_MICRODATA = MicrodataExtractor()
_WHITESPACE = re.compile(r"\s+")
CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def parse_html(html: str) -> HtmlElement | None:
    """The document root of ``html``; None for empty or unparsable input."""
    if not html or not html.strip():
        return None
    try:
        return document_fromstring(CONTROL_CHARS.sub("", html))
    except (ValueError, etree.ParserError):
        return None


def clean(value: object) -> str | None:
    """Collapse whitespace; None for non-strings and empty strings (never "")."""
    if not isinstance(value, str):
        return None
    return _WHITESPACE.sub(" ", value).strip() or None


def join(base: str, href: str | None) -> str | None:
    """Resolve ``href`` against ``base`` and percent-encode what a client could not request
    as is (spaces, non-ASCII, IDN hosts); None when empty or malformed (e.g. bad IPv6 host)."""
    href = strip_html5_whitespace(href or "") if isinstance(href, str) else ""
    if not href:
        return None
    try:
        joined = urljoin(base, href)
    except ValueError:  # a malformed base or href (bad IPv6 host); absolute hrefs still work
        joined = href
    try:
        return safe_url_string(joined)
    except ValueError:  # includes UnicodeError from IDNA
        return None


def host(url: str) -> str:
    """The URL's host name without a leading ``www.``; "" when it has none."""
    try:
        name = urlsplit(url).hostname or ""
    except ValueError:
        return ""
    return name[4:] if name.startswith("www.") else name


def base_url(root: HtmlElement, url: str) -> str:
    """``<base href>`` (itself relative to the page URL) when it is a usable http(s) URL."""
    for href in root.xpath("//base/@href"):
        joined = join(url, href)
        if joined and joined.startswith(("http://", "https://")):
            return joined
    return url


def header(headers: Mapping[str, Any] | None, name: str) -> str | None:
    """Case-insensitive lookup that also copes with Scrapy's bytes keys and list values."""
    for key, value in (headers or {}).items():
        key = key.decode("latin-1") if isinstance(key, bytes) else str(key)
        if key.lower() == name:
            value = (value[0] if value else None) if isinstance(value, list | tuple) else value
            value = value.decode("latin-1") if isinstance(value, bytes) else value
            return value if isinstance(value, str) else None
    return None


def json_ld(root: HtmlElement) -> list[dict[str, Any]]:
    """JSON-LD items, script by script: one broken script must not hide the others.

    extruct's parser already tolerates comments, trailing commas and raw newlines in strings.
    """
    items: list[dict[str, Any]] = []
    for script in root.xpath('//script[@type="application/ld+json"]'):
        try:
            items.extend(i for i in _JSON_LD.extract_items(script) if isinstance(i, dict))
        except Exception as error:  # json, jstyleson and recursion errors alike
            logger.debug("skipping unparsable JSON-LD script: %r", error)
    return items


def json_ld_nodes(items: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Top-level items followed by their ``@graph`` members (Yoast and friends nest there)."""
    for item in items:
        yield item
        graph = item.get("@graph")
        yield from (n for n in (graph if isinstance(graph, list) else [graph])
                    if isinstance(n, dict))


def microdata(root: HtmlElement, base: str) -> list[dict[str, Any]]:
    """extruct's microdata items (``{"type", "properties"}``); [] when the page has none."""
    if not root.xpath("boolean(//*[@itemscope])"):
        return []
    try:
        return [item for item in _MICRODATA.extract_items(root, base) if isinstance(item, dict)]
    except Exception as error:  # extruct on malformed itemref/itemprop soup
        logger.debug("microdata extraction failed: %r", error)
        return []
