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

from core.selectors import Matcher, Selector
from crawler.extract import markup
from crawler.extract.fetched import FetchedPage
from crawler.extract.link_lists import Link, index_content, listed_links
from crawler.extract.text import blocks_text, main_blocks
from crawler.extract.visible_text import without_hidden

#: Elements never content, whichever way it is chosen.
_NEVER_CONTENT = ("script", "style", "noscript", "template", "svg", "iframe", "object",
                  "embed")


@dataclass(frozen=True)
class Content:
    """A page's content, chosen once; each format made from it when first asked. It is
    trafilatura's ``blocks`` or a page's ``elements``, then (an index) a list of ``links``."""

    page: FetchedPage
    blocks: tuple[_Element, ...] = ()
    elements: tuple[HtmlElement, ...] = ()
    links: tuple[Link, ...] = ()
    #: The text of ``blocks``, when it is known already (it decided what the content is).
    blocks_plain: str | None = None

    @cached_property
    def html(self) -> str | None:
        """The content as clean HTML; None when there is none."""
        parts = []
        if self.blocks:
            parts.append(markup.blocks_html(self.blocks, self.page.base))
        if self.elements:
            parts.append(self._elements_html)
        if self.links:
            parts.append("<ul>\n" + "\n".join(f'<li><a href="{escape(url)}">{escape(text)}</a>'
                                               "</li>" for url, text in self.links) + "\n</ul>")
        return "\n".join(part for part in parts if part) or None

    @cached_property
    def text(self) -> str | None:
        """The content's plain text: paragraphs (list items, table rows) separated by blank
        lines; a page's list of entries as markdown links, one per line."""
        parts = []
        if self.blocks:
            parts.append(self.blocks_plain if self.blocks_plain is not None
                         else blocks_text(list(self.blocks)))
        if self.elements:
            parts.append(markup.plain_text(markup.markdown(self._elements_html,
                                                           tables_as_html=False)))
        if self.links:
            parts.append("\n".join(f"- [{_escaped(text)}]({_destination(url)})"
                                   for url, text in self.links))
        return "\n\n".join(part for part in parts if part) or None

    @cached_property
    def _elements_html(self) -> str:
        """``elements`` cleaned (:func:`markup.clean_html`), once for the HTML and the text."""
        return markup.clean_html(self.elements, self.page.base)

    def markdown(self, title: str | None) -> str | None:
        """The content as markdown, ``title`` as its first heading unless it has it."""
        html = self.html
        if html is None:
            return None
        return markup.markdown(html, title) or None


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
    text = blocks_text(blocks)
    if not text:  # no main text: an index, or a table of contents
        return Content(page, links=tuple(listed_links(tree, page.base)))
    index = index_content(text, blocks, tree, page.base)
    if index is not None:  # its entries read as words: the links back
        kept, links = index
        return Content(page, blocks=tuple(kept), links=tuple(links))
    return Content(page, blocks=tuple(blocks), blocks_plain=text)


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


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def _destination(url: str) -> str:
    """A link's URL as a markdown destination: in angle brackets when it holds a space or a
    parenthesis, which would end it."""
    return f"<{url}>" if any(c in url for c in " ()<>") else url



