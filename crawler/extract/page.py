"""Turn one fetched HTML page into title, main text, language, links and metadata.

Pure function (no network, no Scrapy) so the API, the crawler and the benchmarks share one
implementation. The page comes parsed (:class:`~crawler.extract.fetched.FetchedPage`, with
trafilatura's own loader so that the text extraction sees exactly the tree it would build
itself); that tree also feeds links, ``<meta>``, JSON-LD and microdata. trafilatura copies a
tree it is given, so reading it here is safe.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from lxml.html import HtmlElement

from core.items.page import Link, Metadata, Page
from core.record_schema import parse_schema
from core.selectors import Selector, parse_selector
from crawler.extract.authors import json_ld_names, page_author
from crawler.extract.content import main_content
from crawler.extract.dates import page_date
from crawler.extract.fetched import FetchedPage
from crawler.extract.language import page_language
from crawler.extract.links import anchors, canonical_href, link_url, rel_values
from crawler.extract.records import extract_records
from crawler.extract.registry import extracts
from crawler.extract.schema import id_index
from crawler.extract.structured import (
    clean,
    host,
    join,
    json_ld_nodes,
)

logger = logging.getLogger(__name__)

_LANGUAGE = re.compile(r"[a-z]{2,3}")
# (article:* meta, JSON-LD and itemprop key, other meta names), tried in that order
_PUBLISHED = ("article:published_time", "datePublished",
              ("og:published_time", "datepublished", "pubdate", "publishdate", "dc.date.issued",
               "date"))
_MODIFIED = ("article:modified_time", "dateModified", ("og:updated_time", "datemodified"))


@extracts("page")
def extract_page(page: FetchedPage, *, include_links: bool = True,
                 include_metadata: bool = True, formats: Sequence[str] = ("text",),
                 only_main_content: bool = True, include_selectors: Sequence[str] = (),
                 exclude_selectors: Sequence[str] = (), schema: Any = None) -> Page:
    """Extract everything a client asks about one page; every key is present, each format
    not in ``formats`` null. The content (:func:`~crawler.extract.content.main_content`)
    is chosen by ``only_main_content`` and the selectors (CSS, checked already); ``schema``
    (a selector schema, checked already) gives ``records``.

    Links are resolved against the page's address (after redirects) and ``<base href>``; the
    Content-Language header is the language's fallback.

    Malformed input never raises: each parser call that can choke on it is guarded where it
    is made (in :mod:`~crawler.extract.fetched` and :mod:`~crawler.extract.structured`). A bug
    in this code does raise, so that the crawl reports a failure instead of a blank page billed
    as a success.
    """
    language = _language_code(page.header("content-language"))
    root = page.root
    if root is None:
        return Page(language=language, metadata=Metadata() if include_metadata else None,
                    raw_html=page.html if "raw_html" in formats else None)
    meta, http_equiv = page.meta
    content = main_content(page, only_main_content=only_main_content,
                           include=_parsed(include_selectors), exclude=_parsed(exclude_selectors))
    title = _title(root, meta)
    text = content.text
    return Page(
        title=title,
        text=text if "text" in formats else None,
        # the title heads the markdown, unless the client chose the content by selectors
        markdown=(content.markdown(None if include_selectors else title)
                  if "markdown" in formats else None),
        html=content.html if "html" in formats else None,
        raw_html=page.html if "raw_html" in formats else None,
        language=page_language(_language(root, meta, http_equiv) or language, text),
        links=_links(root, page.base, page.address) if include_links else [],
        metadata=_metadata(page) if include_metadata else None,
        records=extract_records(page, parse_schema(schema)) if schema is not None else None,
    )


def _parsed(selectors: Sequence[str]) -> tuple[Selector, ...]:
    return tuple(map(parse_selector, selectors))


def _title(root: HtmlElement, meta: Mapping[str, str]) -> str | None:
    titles = (clean(el.text_content()) for el in root.xpath("//title[not(ancestor::svg)]"))
    headings = (clean(el.text_content()) for el in root.iter("h1"))
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


def _links(root: HtmlElement, base: str, page_url: str) -> list[Link]:
    """Every usable link (:func:`~crawler.extract.links.link_url`), first occurrence of each
    URL kept, nofollow ones included and marked: the page is described, not crawled."""
    page_host = host(join(page_url, page_url) or page_url)
    seen: set[str] = set()
    links: list[Link] = []
    for anchor, url in anchors(root, base):
        if url in seen:
            continue
        seen.add(url)
        links.append(Link(
            url=url,
            text=clean(anchor.text_content()),
            rel="nofollow" if "nofollow" in rel_values(anchor) else None,
            internal=host(url) == page_host,
        ))
    return links


def _metadata(page: FetchedPage) -> Metadata:
    root, base, meta = page.root, page.base, page.meta[0]
    assert root is not None
    items = page.json_ld
    nodes = list(json_ld_nodes(items))
    by_id = id_index(items)
    canonical = canonical_href(root)
    publisher = json_ld_names(_first(nodes, "publisher"), by_id)
    site_name = meta.get("og:site_name") or publisher
    return Metadata(
        description=meta.get("description") or meta.get("og:description"),
        # http(s) only, as for links: a client renders these as links or fetches them
        canonical_url=link_url(base, canonical) or link_url(base, meta.get("og:url")),
        author=page_author(meta, _first(nodes, "author"), by_id,
                           (site_name, publisher, meta.get("application-name"))),
        published_at=_date(root, meta, nodes, published=True),
        modified_at=_date(root, meta, nodes, published=False),
        site_name=site_name,
        image=link_url(base, meta.get("og:image"))
        or link_url(base, meta.get("twitter:image") or meta.get("twitter:image:src")),
        keywords=[k.strip() for k in meta.get("keywords", "").split(",") if k.strip()],
        open_graph={k: v for k, v in meta.items() if k.startswith("og:")},
        twitter={k: v for k, v in meta.items() if k.startswith("twitter:")},
        json_ld=items,
        microdata=page.microdata,
        meta=meta,
    )


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

    return next(filter(None, map(page_date, candidates())), None)


def _first(nodes: Iterable[dict[str, Any]], key: str) -> Any:
    return next((node[key] for node in nodes if node.get(key)), None)


