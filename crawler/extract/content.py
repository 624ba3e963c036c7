"""Which part of a page is its content, and that content in every format a client may ask for.

Three ways of choosing it, each applied to the page without what a reader never sees:

- the readable main content (``only_main_content``, the default): trafilatura's extraction
  (:func:`crawler.extract.text.main_blocks`), whose blocks give the text, the HTML and the
  markdown alike, so that markdown stripped of its markup is the text;
- the whole ``<body>`` (``only_main_content=false``);
- the elements ``include_selectors`` match, in document order (then ``only_main_content``
  does not apply: the client chose the content).

``exclude_selectors`` remove their elements first, whichever way is taken. A page without main
text that is all links (an index, a table of contents) keeps its list of links: documentation
sites are made of such pages.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from html import escape

from lxml.etree import _Element
from lxml.html import HtmlElement

from core.selectors import Matcher, Selector, parse_selector
from crawler.extract import markup
from crawler.extract.fetched import FetchedPage
from crawler.extract.links import anchors
from crawler.extract.structured import clean
from crawler.extract.text import blocks_text, main_blocks
from crawler.extract.visible_text import without_hidden

#: Elements never content, whichever way it is chosen.
_NEVER_CONTENT = ("script", "style", "noscript", "template", "svg", "iframe", "object",
                  "embed")
#: Where the links of a page without main text are looked for first.
_MAIN_AREAS = tuple(map(parse_selector, ("main", "article", "[role=main]")))
#: Boilerplate around an index's own list.
_AROUND = ("header", "footer", "nav", "aside")
#: At most this many links make a page's list of links.
MAX_LISTED_LINKS = 1000


@dataclass(frozen=True)
class Content:
    """A page's content, chosen once; each format made from it when first asked."""

    page: FetchedPage
    blocks: tuple[_Element, ...] = ()
    elements: tuple[HtmlElement, ...] = ()
    links: tuple[tuple[str, str], ...] = ()

    @cached_property
    def html(self) -> str | None:
        """The content as clean HTML; None when there is none."""
        if self.blocks:
            return markup.blocks_html(self.blocks, self.page.base)
        if self.elements:
            return markup.clean_html(self.elements, self.page.base)
        if self.links:
            return "<ul>\n" + "\n".join(
                f"<li>{_link_html(url, text)}</li>" for url, text in self.links) + "\n</ul>"
        return None

    @cached_property
    def text(self) -> str | None:
        """The content's plain text: paragraphs (list items, table rows) separated by blank
        lines; a page of links lists them as markdown links, one per line."""
        if self.blocks:
            return blocks_text(list(self.blocks)) or None
        if self.elements and self.html is not None:
            return markup.plain_text(markup.markdown(self.html, tables_as_html=False)) or None
        return self._link_list()

    def markdown(self, title: str | None) -> str | None:
        """The content as markdown, ``title`` as its first heading unless it starts with it."""
        if self.links and not self.blocks and not self.elements:
            listed = self._link_list()
            return markup.markdown("", title) + "\n\n" + listed if title else listed
        html = self.html
        if html is None:
            return None
        return markup.markdown(html, title) or None

    def _link_list(self) -> str | None:
        return "\n".join(f"- [{_escaped(text)}]({_destination(url)})"
                         for url, text in self.links) or None


def main_content(page: FetchedPage, *, only_main_content: bool = True,
                 include: Sequence[Selector] = (), exclude: Sequence[Selector] = ()
                 ) -> Content:
    """The content of ``page`` chosen as the module says (selectors already parsed by
    :func:`core.selectors.parse_selector`). Raises
    :class:`core.selectors.SelectorBudgetExceeded` when the selectors cost too much."""
    tree = page.tree
    if tree is None or not page.is_document:
        return Content(page)
    if exclude:
        tree = _without(tree, exclude)
    if include:
        visible = without_hidden(tree)
        return Content(page, elements=tuple(
            _copy_of(element) for element in Matcher(visible).select_outermost(include)))
    if not only_main_content:
        visible = without_hidden(tree)
        body = visible.find("body")
        return Content(page, elements=(_copy_of(body if body is not None else visible),))
    blocks = main_blocks(tree, page.address)
    if blocks_text(blocks):
        return Content(page, blocks=tuple(blocks))
    return Content(page, links=tuple(_listed_links(tree, page.base)))


def _without(tree: HtmlElement, selectors: Sequence[Selector]) -> HtmlElement:
    """A copy of ``tree`` without the elements ``selectors`` match (their tails kept)."""
    tree = copy.deepcopy(tree)
    for element in Matcher(tree).select_outermost(selectors):
        if element.getparent() is not None:
            element.drop_tree()
    return tree


def _copy_of(element: HtmlElement) -> HtmlElement:
    """A copy of ``element`` without what is never content."""
    copied = copy.deepcopy(element)
    copied.tail = None
    for never in list(copied.iter(*_NEVER_CONTENT)):
        if never.getparent() is not None:
            never.drop_tree()
    return copied


def _listed_links(tree: HtmlElement, base: str) -> list[tuple[str, str]]:
    """The links of a page without main text, each once, in document order: those of its
    main area when it marks one, else of its body without header, footer, navigation and
    asides (unless nothing else holds links)."""
    matcher = Matcher(tree)
    areas: list[HtmlElement] = []
    for selector in _MAIN_AREAS:
        areas = matcher.select_outermost([selector])
        if areas:
            break
    if not areas:
        body = tree.find("body")
        whole = body if body is not None else tree
        trimmed = copy.deepcopy(whole)
        for element in list(trimmed.iter(*_AROUND)):
            if element.getparent() is not None:
                element.drop_tree()
        areas = [trimmed] if any(True for _ in anchors(trimmed, base)) else [whole]
    seen: set[str] = set()
    links: list[tuple[str, str]] = []
    for area in areas:
        for anchor, url in anchors(area, base):
            text = clean(anchor.text_content())
            if not text or url in seen:
                continue
            seen.add(url)
            links.append((url, text))
            if len(links) == MAX_LISTED_LINKS:
                return links
    return links


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def _destination(url: str) -> str:
    """A link's URL as a markdown destination: in angle brackets when it holds a space or a
    parenthesis, which would end it."""
    return f"<{url}>" if any(c in url for c in " ()<>") else url


def _link_html(url: str, text: str) -> str:
    return f'<a href="{escape(url)}">{escape(text)}</a>'

