"""Turn one fetched HTML page into title, main text, language, links and metadata.

Pure function (no network, no Scrapy) so the API, the crawler and the benchmarks share one
implementation. The page is parsed once, with trafilatura's own loader so that the text
extraction sees exactly the tree it would build itself; that tree also feeds links, ``<meta>``,
JSON-LD and microdata. trafilatura copies a tree it is given, so reading it here is safe.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urljoin, urlsplit

import trafilatura
from extruct import JsonLdExtractor, MicrodataExtractor
from lxml import etree
from lxml.html import HtmlElement, document_fromstring
from w3lib.html import strip_html5_whitespace
from w3lib.url import safe_url_string

logger = logging.getLogger(__name__)

# Best F1 over the whole article benchmark (bench/article_quality_inprocess.py lists the others).
# deduplicate stays off: trafilatura's cache is process-wide and would drop re-fetched pages.
TRAFILATURA_OPTIONS: dict[str, Any] = {
    "favor_precision": True,
    "include_tables": True,
    "include_comments": False,
    "deduplicate": False,
}

_JSON_LD = JsonLdExtractor()
_MICRODATA = MicrodataExtractor()
_WHITESPACE = re.compile(r"\s+")
_LANGUAGE = re.compile(r"[a-z]{2,3}")
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_URL_LIKE = re.compile(r"(https?:)?//|www\.", re.IGNORECASE)
_HOSTNAME = re.compile(r"[a-z0-9._-]+|[0-9a-f:.]+")  # after IDNA encoding; IPv6 unbracketed
# (article:* meta, JSON-LD and itemprop key, other meta names), tried in that order
_PUBLISHED = ("article:published_time", "datePublished",
              ("og:published_time", "datepublished", "pubdate", "publishdate", "dc.date.issued",
               "date"))
_MODIFIED = ("article:modified_time", "dateModified", ("og:updated_time", "datemodified"))


def extract_page(url: str, html: str, headers: Mapping[str, str] | None = None, *,
                 include_links: bool = True, include_metadata: bool = True) -> dict[str, Any]:
    """Extract everything a client asks about one page; never raises, every key is present.

    ``url`` is the final URL (after redirects), used with ``<base href>`` to resolve links.
    ``headers`` only supplies a Content-Language fallback for the language.
    """
    result: dict[str, Any] = {
        "title": None, "text": None, "language": None, "links": [],
        "metadata": _blank_metadata() if include_metadata else None,
    }
    try:
        result["language"] = _language_code(_header(headers, "content-language"))
        tree, trafilatura_ok = _parse(html)
        if tree is None:
            return result
        root = tree.getroottree().getroot()
        base = _base_url(root, url)
        meta, http_equiv = _meta_tags(root)
        result["title"] = _title(root, meta)
        result["text"] = _text(tree, url) if trafilatura_ok else None
        result["language"] = _language(root, meta, http_equiv) or result["language"]
        if include_links:
            result["links"] = _links(root, base, url)
        if include_metadata:
            result["metadata"] = _metadata(root, base, meta)
    except Exception:  # last resort: one odd page must not fail a crawl or an API call
        logger.exception("page extraction failed for %s", url)
    return result


def _blank_metadata() -> dict[str, Any]:
    return {
        "description": None, "canonical_url": None, "author": None, "published_at": None,
        "modified_at": None, "site_name": None, "image": None, "keywords": [],
        "open_graph": {}, "twitter": {}, "json_ld": [], "microdata": [], "meta": {},
    }


def _parse(html: str) -> tuple[HtmlElement | None, bool]:
    """Return (tree, whether trafilatura accepts it).

    trafilatura rejects bare fragments without ``<html>``; such pages still get links and
    metadata from a plain lxml parse, but no main text.
    """
    if not html or not html.strip():
        return None, False
    try:
        tree = trafilatura.load_html(html)
    except Exception:  # lxml/encoding errors on garbage input
        logger.debug("trafilatura could not load the page", exc_info=True)
        tree = None
    if tree is not None:
        return tree, True
    try:
        return document_fromstring(_CONTROL_CHARS.sub("", html)), False
    except (ValueError, etree.ParserError):
        return None, False


def _clean(value: object) -> str | None:
    """Collapse whitespace; None for non-strings and empty strings (never "")."""
    if not isinstance(value, str):
        return None
    return _WHITESPACE.sub(" ", value).strip() or None


def _join(base: str, href: str | None) -> str | None:
    """Resolve ``href`` against ``base`` and percent-encode what a client could not request
    as is (spaces, non-ASCII, IDN hosts); None when empty or malformed (e.g. bad IPv6 host)."""
    href = strip_html5_whitespace(href or "")
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


def _host(url: str) -> str:
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return ""
    return host[4:] if host.startswith("www.") else host


def _base_url(root: HtmlElement, url: str) -> str:
    """``<base href>`` (itself relative to the page URL) when it is a usable http(s) URL."""
    for href in root.xpath("//base/@href"):
        joined = _join(url, href)
        if joined and joined.startswith(("http://", "https://")):
            return joined
    return url


def _header(headers: Mapping[str, Any] | None, name: str) -> str | None:
    """Case-insensitive lookup that also copes with Scrapy's bytes keys and list values."""
    for key, value in (headers or {}).items():
        key = key.decode("latin-1") if isinstance(key, bytes) else str(key)
        if key.lower() == name:
            value = (value[0] if value else None) if isinstance(value, list | tuple) else value
            value = value.decode("latin-1") if isinstance(value, bytes) else value
            return value if isinstance(value, str) else None
    return None


def _meta_tags(root: HtmlElement) -> tuple[dict[str, str], dict[str, str]]:
    """Read every ``<meta>`` once: name/property → content, and http-equiv → content.

    Keys are lower-cased (``Description`` and ``description`` are the same tag); first wins.
    """
    meta: dict[str, str] = {}
    http_equiv: dict[str, str] = {}
    for element in root.iter("meta"):
        content = _clean(element.get("content"))
        if content is None:
            continue
        for key in (element.get("name"), element.get("property")):
            if key and key.strip():
                meta.setdefault(key.strip().lower(), content)
        if (equiv := (element.get("http-equiv") or "").strip().lower()):
            http_equiv.setdefault(equiv, content)
    return meta, http_equiv


def _title(root: HtmlElement, meta: Mapping[str, str]) -> str | None:
    titles = (_clean(el.text_content()) for el in root.xpath("//title[not(ancestor::svg)]"))
    headings = (_clean(el.text_content()) for el in root.iter("h1"))
    return next(filter(None, titles), None) or meta.get("og:title") or next(
        filter(None, headings), None)


def _language_code(value: str | None) -> str | None:
    """Primary subtag of a language tag or locale ("en-US", "en_GB, fr" → "en")."""
    if not value:
        return None
    primary = re.split(r"[-_,;\s]", value.strip(), maxsplit=1)[0].lower()
    return primary if _LANGUAGE.fullmatch(primary) and primary != "und" else None


def _language(root: HtmlElement, meta: Mapping[str, str], http_equiv: Mapping[str, str]
              ) -> str | None:
    candidates = (root.get("lang"), root.get("xml:lang"),
                  http_equiv.get("content-language"), meta.get("og:locale"))
    return next(filter(None, map(_language_code, candidates)), None)


def _text(tree: HtmlElement, url: str) -> str | None:
    try:
        raw = trafilatura.extract(tree, url=url, output_format="txt", **TRAFILATURA_OPTIONS)
    except Exception:  # trafilatura bugs on odd markup must not lose the rest of the page
        logger.warning("text extraction failed for %s", url, exc_info=True)
        return None
    # one paragraph per line in trafilatura's txt output; squeeze the spaces it leaves inside
    paragraphs = (" ".join(line.split()) for line in (raw or "").splitlines())
    return "\n\n".join(filter(None, paragraphs)) or None


def _links(root: HtmlElement, base: str, page_url: str) -> list[dict[str, Any]]:
    """Crawlable links: absolute http(s), no fragment, first occurrence of each URL kept."""
    page_host = _host(_join(page_url, page_url) or page_url)
    seen: set[str] = set()
    links: list[dict[str, Any]] = []
    for anchor in root.iter("a"):
        href = anchor.get("href")
        if not href or strip_html5_whitespace(href).startswith("#"):
            continue
        try:  # javascript:, mailto:, tel:, data: keep their scheme through urljoin: dropped here
            parts = urlsplit(_join(base, href) or "")
            # reading .port validates it: out-of-range ports raise ValueError
            if (parts.scheme not in ("http", "https") or parts.port == 0
                    or not _HOSTNAME.fullmatch(parts.hostname or "")):
                continue
        except ValueError:
            continue
        link_url = parts._replace(fragment="").geturl()
        if link_url in seen:
            continue
        seen.add(link_url)
        rel = (anchor.get("rel") or "").lower().split()
        links.append({
            "url": link_url,
            "text": _clean(anchor.text_content()),
            "rel": "nofollow" if "nofollow" in rel else None,
            "internal": _host(link_url) == page_host,
        })
    return links


def _metadata(root: HtmlElement, base: str, meta: dict[str, str]) -> dict[str, Any]:
    json_ld = _json_ld(root)
    nodes = list(_json_ld_nodes(json_ld))
    by_id = {node["@id"]: node for node in nodes if isinstance(node.get("@id"), str)}
    author = meta.get("article:author")
    if author and _URL_LIKE.match(author):  # a profile URL (Facebook style), not a name
        author = None
    canonical = next((link.get("href") for link in root.xpath("//link[@href]")
                      if "canonical" in (link.get("rel") or "").lower().split()), None)
    return {
        "description": meta.get("description") or meta.get("og:description"),
        "canonical_url": _join(base, canonical) or _join(base, meta.get("og:url")),
        "author": meta.get("author") or author or _names(_first(nodes, "author"), by_id),
        "published_at": _date(root, meta, nodes, published=True),
        "modified_at": _date(root, meta, nodes, published=False),
        "site_name": meta.get("og:site_name") or _names(_first(nodes, "publisher"), by_id),
        "image": _join(base, meta.get("og:image"))
        or _join(base, meta.get("twitter:image") or meta.get("twitter:image:src")),
        "keywords": [k.strip() for k in meta.get("keywords", "").split(",") if k.strip()],
        "open_graph": {k: v for k, v in meta.items() if k.startswith("og:")},
        "twitter": {k: v for k, v in meta.items() if k.startswith("twitter:")},
        "json_ld": json_ld,
        "microdata": _microdata(root, base),
        "meta": meta,
    }


def _date(root: HtmlElement, meta: Mapping[str, str], nodes: list[dict[str, Any]], *,
          published: bool) -> str | None:
    """First date found, most explicit source first; lazy so the XPath fallbacks rarely run."""
    article_meta, key, other_meta = _PUBLISHED if published else _MODIFIED

    def candidates() -> Iterator[Any]:
        yield meta.get(article_meta)
        yield _first(nodes, key)
        yield from map(meta.get, other_meta)
        yield from root.xpath(f"//*[@itemprop='{key}']/@content|//*[@itemprop='{key}']/@datetime")
        if published:
            yield from root.xpath("//article//time/@datetime")

    return next(filter(None, map(_normalise_date, candidates())), None)


def _normalise_date(value: Any) -> str | None:
    """ISO 8601 with a timezone → UTC "YYYY-MM-DDTHH:MM:SSZ"; anything else kept as found."""
    text = _clean(value)
    if text is None:
        return None
    try:
        parsed = datetime.fromisoformat(text)
        if parsed.tzinfo is None:
            return text
        return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (ValueError, OverflowError):
        return text


def _json_ld(root: HtmlElement) -> list[dict[str, Any]]:
    """JSON-LD items, script by script: one broken script must not hide the others."""
    items: list[dict[str, Any]] = []
    for script in root.xpath('//script[@type="application/ld+json"]'):
        try:
            items.extend(i for i in _JSON_LD.extract_items(script) if isinstance(i, dict))
        except Exception as error:  # json, jstyleson and recursion errors alike
            logger.debug("skipping unparsable JSON-LD script: %r", error)
    return items


def _json_ld_nodes(items: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Top-level items followed by their ``@graph`` members (Yoast and friends nest there)."""
    for item in items:
        yield item
        graph = item.get("@graph")
        yield from (n for n in (graph if isinstance(graph, list) else [graph])
                    if isinstance(n, dict))


def _first(nodes: Iterable[dict[str, Any]], key: str) -> Any:
    return next((node[key] for node in nodes if node.get(key)), None)


def _names(value: Any, by_id: Mapping[str, dict[str, Any]]) -> str | None:
    """Person/organisation name(s) from a JSON-LD value: string, object or list of either.

    Objects may be bare ``{"@id": …}`` references to a ``@graph`` node (Yoast does that).
    """
    names = []
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, dict) and "name" not in item and isinstance(item.get("@id"), str):
            item = by_id.get(item["@id"], item)
        names.append(_clean(item.get("name") if isinstance(item, dict) else item))
    return ", ".join(dict.fromkeys(filter(None, names))) or None


def _microdata(root: HtmlElement, base: str) -> list[dict[str, Any]]:
    if not root.xpath("boolean(//*[@itemscope])"):
        return []
    try:
        return [item for item in _MICRODATA.extract_items(root, base) if isinstance(item, dict)]
    except Exception as error:  # extruct on malformed itemref/itemprop soup
        logger.debug("microdata extraction failed: %r", error)
        return []
