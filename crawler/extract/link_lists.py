"""Pages that are mostly links (a documentation index, a table of contents, a sitemap page):
their content is their list of entries.

trafilatura reads such a page as having no main text (it leaves out link-heavy blocks), or
keeps the entries' words without their links. Either way a crawl of a documentation site would
lose those pages' content. Here the page's list of entries is found (the list, table or
element holding the most links of its main area: a sidebar or a menu holds fewer than the
index itself) and given as links, each once, in document order.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Sequence

from lxml.etree import Element, _Element
from lxml.html import HtmlElement

from core.selectors import Matcher, parse_selector
from crawler.extract.links import anchors, link_url
from crawler.extract.structured import clean
from crawler.extract.text import blocks_text

#: Where the entries are looked for first.
_MAIN_AREAS = tuple(map(parse_selector, ("main", "article", "[role=main]")))
#: Boilerplate around an index's own list (left out when a main area is not marked).
_AROUND = ("header", "footer", "nav", "aside")
#: Elements that hold a list of entries.
_LISTS = ("ul", "ol", "dl", "table", "nav", "div", "section")
#: At most this many entries.
MAX_LISTED_LINKS = 1000
#: Main text whose lines are mostly its links' texts is an index: at least this many lines,
#: and this share of them.
INDEX_LINES, INDEX_SHARE = 5, 0.6

Link = tuple[str, str]  # (absolute URL, text)


def listed_links(tree: HtmlElement, base: str) -> list[Link]:
    """The page's entries: the links of the element of its main area with the most links
    (nested lists in it included), each URL once; ``[]`` when it has no link."""
    area = _main_area(tree, base)
    held: Counter[HtmlElement] = Counter()  # links under each element: one pass over them
    for anchor, _ in anchors(area, base):
        for ancestor in anchor.iterancestors(*_LISTS):
            held[ancestor] += 1
            if ancestor is area:
                break
    best, most = area, 0
    for element in area.iter(*_LISTS):
        count = held[element]
        # the innermost of equals: a div around the list holds no more links than the list
        if count > most or (count == most and best in element.iterancestors()):
            best, most = element, count
    return _links_of(best, base)


def index_content(text: str, blocks: Sequence[_Element], tree: HtmlElement, base: str
                  ) -> tuple[list[_Element], list[Link]] | None:
    """For main text (``text``, of ``blocks``) that is mostly the texts of the page's links
    (an index read by trafilatura as words): its other blocks (a heading, an introduction)
    and the page's entries; None for any other text."""
    lines = [line.lstrip("-•* ").strip() for line in text.split("\n\n")]
    if len(lines) < INDEX_LINES:  # most pages: too few lines to be an index, no link read
        return None
    # the texts of the page's usable links, of those that are lines of the text: an anchor's
    # href is resolved only when its text is one (an article's hundreds of links are not)
    wanted = set(lines)
    names = {name for anchor in tree.iter("a")
             if (name := clean(anchor.text_content())) in wanted
             and link_url(base, anchor.get("href")) is not None}
    linked = sum(line in names for line in lines)
    if linked < INDEX_LINES or linked < INDEX_SHARE * len(lines):
        return None
    kept: list[_Element] = []
    for block in blocks:
        own = blocks_text([block]).split("\n\n")
        words = [line for line in own if line.lstrip("-•* ").strip() not in names]
        if len(words) == len(own):
            kept.append(block)
            continue
        for line in words:  # a block of entries and words: the words, a paragraph each
            paragraph = Element("p")
            paragraph.text = line
            kept.append(paragraph)
    return kept, listed_links(tree, base)


def _main_area(tree: HtmlElement, base: str) -> HtmlElement:
    """The page's main area when it marks one; else its body without header, footer,
    navigation and asides (the whole body when nothing else holds a link)."""
    matcher = Matcher(tree)
    for selector in _MAIN_AREAS:
        areas = matcher.select_outermost([selector])
        if areas:
            return max(areas, key=lambda area: sum(1 for _ in anchors(area, base)))
    body = tree.find("body")
    whole = body if body is not None else tree
    trimmed = copy.deepcopy(whole)
    for element in list(trimmed.iter(*_AROUND)):
        if element.getparent() is not None:
            element.drop_tree()
    return trimmed if any(True for _ in anchors(trimmed, base)) else whole


def _links_of(element: HtmlElement, base: str) -> list[Link]:
    seen: set[str] = set()
    links: list[Link] = []
    for anchor, url in anchors(element, base):
        text = clean(anchor.text_content())
        if not text or url in seen:
            continue
        seen.add(url)
        links.append((url, text))
        if len(links) == MAX_LISTED_LINKS:
            break
    return links
