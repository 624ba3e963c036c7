"""Shared reading of HTML for every extractor: parsing, URL joining, ``<meta>`` tags, JSON-LD,
microdata and RDFa.

Pure helpers (no network, no Scrapy). Each extractor in this package reads the page through
these, so a quirk fixed here (a broken JSON-LD script, a bad ``<base href>``) is fixed for all.
"""

from __future__ import annotations

import html
import json
import logging
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

import jstyleson
from extruct import JsonLdExtractor, MicrodataExtractor, RDFaExtractor
from extruct.utils import parse_xmldom_html
from lxml import etree
from lxml.html import HtmlElement, document_fromstring
from w3lib.html import strip_html5_whitespace
from w3lib.url import safe_url_string

logger = logging.getLogger(__name__)

_JSON_LD = JsonLdExtractor()
_MICRODATA = MicrodataExtractor()
_RDFA = RDFaExtractor()
_WHITESPACE = re.compile(r"\s+")
CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
# wrappers some CMSs put around a script's JSON: CDATA sections and HTML comment markers
_JSON_WRAPPERS = re.compile(r"<!\[CDATA\[|\]\]>|<!--|-->")
# a backslash pair, or a backslash before a character JSON cannot escape (\' \x \$ …)
_JSON_ESCAPES = re.compile(r"\\\\|\\(?![\"\\/bfnrtu])")
_JSON_SEPARATORS = re.compile(r"[\s,;]*")


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
        if key.lower() == name.lower():
            value = (value[0] if value else None) if isinstance(value, list | tuple) else value
            value = value.decode("latin-1") if isinstance(value, bytes) else value
            return value if isinstance(value, str) else None
    return None


def json_ld(root: HtmlElement) -> list[dict[str, Any]]:
    """JSON-LD items, script by script: one broken script must not hide the others.

    extruct's parser already tolerates comments, trailing commas and raw newlines in strings;
    what it still rejects gets one more, more lenient, try (``lenient_json``).
    """
    items: list[dict[str, Any]] = []
    for script in root.xpath('//script[@type="application/ld+json"]'):
        try:
            found = list(_JSON_LD.extract_items(script))
        except Exception as error:  # json, jstyleson and recursion errors alike
            found = _flatten(lenient_json(script.xpath("string()")))
            if not found:
                logger.debug("skipping unparsable JSON-LD script: %r", error)
        items.extend(finite(i) for i in found if isinstance(i, dict))
    return items


def finite(value: Any) -> Any:
    """``value`` with every NaN and infinite number (``NaN``, ``Infinity``, ``1e400``: Python's
    ``json`` reads them) made None. Passed on, they would be written as bare ``NaN`` that no
    strict JSON parser reads, failing a client's whole answer for one odd field.

    Freshly parsed JSON is ours: its lists and objects are mended in place, walked with a
    stack rather than recursion, so JSON as deep as the parser read stays readable."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    stack = [value] if isinstance(value, dict | list) else []
    while stack:
        container = stack.pop()
        pairs = container.items() if isinstance(container, dict) else enumerate(container)
        for key, item in list(pairs):
            if isinstance(item, float) and not math.isfinite(item):
                container[key] = None
            elif isinstance(item, dict | list):
                stack.append(item)
    return value


def lenient_json(text: str) -> list[Any]:
    """The JSON values in ``text`` as real sites write them; [] when nothing can be read.

    Undoes what breaks strict parsers in the wild: CDATA and HTML comment wrappers, a script
    HTML-escaped as a whole (``{&quot;name&quot;: …}``), control characters, invalid escapes
    (``\\'``), comments and trailing commas (jstyleson), and several values written one after
    the other without an enclosing array. Values read before a broken one are kept.
    """
    text = _JSON_WRAPPERS.sub("", text).strip()
    if "&quot;" in text and '"' not in text:  # escaped as a whole, not one value inside
        text = html.unescape(text)
    text = CONTROL_CHARS.sub("", text)
    text = _JSON_ESCAPES.sub(lambda m: m.group() if len(m.group()) == 2 else "", text)
    try:
        text = jstyleson.dispose(text)
    except Exception as error:  # jstyleson's index juggling on truncated input
        logger.debug("could not strip JSON comments: %r", error)
    decoder = json.JSONDecoder(strict=False)
    values: list[Any] = []
    position = _JSON_SEPARATORS.match(text).end()
    while position < len(text):
        try:
            value, position = decoder.raw_decode(text, position)
        except (ValueError, RecursionError):
            break
        values.append(value)
        position = _JSON_SEPARATORS.match(text, position).end()
    return values


def _flatten(values: list[Any]) -> list[Any]:
    """Top-level arrays spread into their items, as extruct does for one array per script."""
    return [item for value in values for item in (value if isinstance(value, list) else [value])]


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


def rdfa(html_text: str, root: HtmlElement, base: str) -> list[dict[str, Any]]:
    """extruct's RDFa graph (expanded JSON-LD nodes); [] when the page types nothing.

    pyRdfa needs its own DOM, so the page is parsed a second time, and only when ``root``
    shows a ``typeof`` attribute: RDFa without types (plain OpenGraph ``property`` tags) is
    read from the ``<meta>`` tags instead.
    """
    if not root.xpath("boolean(//*[@typeof])"):
        return []
    try:
        document = parse_xmldom_html(CONTROL_CHARS.sub("", html_text).encode("utf-8"), "utf-8")
        return [node for node in _RDFA.extract_items(document, base) if isinstance(node, dict)]
    except Exception as error:  # pyRdfa and rdflib on malformed markup
        logger.debug("RDFa extraction failed: %r", error)
        return []


def meta_tags(root: HtmlElement) -> tuple[dict[str, str], dict[str, str]]:
    """Read every ``<meta>`` once: name/property → content, and http-equiv → content.

    Keys are lower-cased (``Description`` and ``description`` are the same tag); first wins.
    """
    meta: dict[str, str] = {}
    http_equiv: dict[str, str] = {}
    for element in root.iter("meta"):
        content = clean(element.get("content"))
        if content is None:
            continue
        for key in (element.get("name"), element.get("property")):
            if key and key.strip():
                meta.setdefault(key.strip().lower(), content)
        if (equiv := (element.get("http-equiv") or "").strip().lower()):
            http_equiv.setdefault(equiv, content)
    return meta, http_equiv
