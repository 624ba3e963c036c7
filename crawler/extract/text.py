"""A page's readable text: trafilatura, asked more than once when its first answer looks short.

trafilatura's precision mode gives the best text on most pages (``TRAFILATURA_OPTIONS``), but
two kinds of page lose most of their text in it:

- pages whose main content is not an article (a shop, a listing, an Impressum): precision
  mode keeps a fragment (a cookie notice, "added to bag") where recall mode keeps the page's
  content. When the precision text is a fragment (:data:`FRAGMENT`; not nothing: a page
  without main text, all links, keeps none) and less than half the
  recall text (:data:`SHORT`), the recall text is taken. Recall mode only runs for such a
  fragment, and only when it could change the answer: when the fragment is less than half
  of all the visible text in the page's body.
- articles split by advertising rows into sibling containers of the same class
  (``div.article__body`` … ad … ``div.article__body``): trafilatura takes the first and stops
  after the first section. Those containers (two or more, each with paragraphs of real text,
  with a class that names a body) are joined into the first, on a copy of the tree, and that
  text is taken when it is longer.

- list-like pages (an Impressum, a contact page: mostly short lines) lose lines from the middle
  of an address block in precision mode ("Musterfirma GmbH" directly in a ``div``, without
  a full stop). On such a page default mode is asked too, and the short lines it keeps
  *between* two lines of the precision text are put back (:func:`_fill_gaps`); nothing is
  added before or after, where boilerplate would be.

Measured on the whole shared article set (``bench/article_quality_inprocess.py``): F1 0.964
with precision mode alone, 0.969 with the recall fallback, 0.972 with both; 0.9725 (from
0.9716) once what a reader never sees is left out first.
"""

from __future__ import annotations

import copy
import logging
import re
from collections import defaultdict
from typing import Any

import trafilatura
from lxml import etree
from lxml.etree import Element, _Element
from lxml.html import HtmlElement
from trafilatura.xml import xmltotxt

from core.controls import escaped
from crawler.extract.visible_text import without_hidden

logger = logging.getLogger(__name__)

# Best F1 over the whole article benchmark (bench/article_quality_inprocess.py lists the others).
# deduplicate stays off: trafilatura's cache is process-wide and would drop re-fetched pages.
TRAFILATURA_OPTIONS: dict[str, Any] = {
    "favor_precision": True,
    "include_tables": True,
    "include_comments": False,
    "deduplicate": False,
}
#: Precision texts shorter than this (a cookie notice, "added to bag", a blurb) are checked
#: against recall mode's; longer ones are taken as they are (recall mode costs as much again).
FRAGMENT = 500
#: The precision text is "short" below this share of another candidate's length.
SHORT = 0.5
#: A text is list-like when this share of its lines is shorter than SHORT_LINE characters;
#: then default mode's short lines are put back where precision mode left gaps (at most
#: MAX_GAP lines, each shorter than GAP_LINE).
SHORT_LINE, LIST_SHARE = 60, 0.5
MAX_GAP, GAP_LINE = 3, 120
#: A container of a split body: a class naming a body, and this many paragraphs this long.
BODY_CLASS = re.compile(r"body|content|article|story|text|post|entry", re.IGNORECASE)
PARAGRAPHS, PARAGRAPH_CHARS = 2, 80
_INVISIBLE = {"script", "style", "noscript", "template"}
#: The elements a split body's parts are.
_CONTAINERS = ("div", "section", "article")
#: Where the parts of a page's own article never are.
_BESIDE_MAIN = {"aside", "nav", "footer", "header"}
#: Lines of a table trafilatura writes with nothing in their cells (``| | |``).
_EMPTY_ROW = re.compile(r"^[|\s]*$")
_EMPTY_CELLS = re.compile(r"(\|\s*){2,}")
#: Brackets the language of a code block in trafilatura's text (a private-use character, which
#: no page's text holds: the loader's tree would keep it, but nothing renders it).
CODE_MARK = "\ue000"
_CODE_LANGUAGE = re.compile(f"^{CODE_MARK}[^{CODE_MARK}]*{CODE_MARK}")
_LANGUAGE_CLASS = re.compile(r"(?:^|\s)(?:language|lang|highlight-source|brush:)-?([\w+#.-]+)")
_LANGUAGE_NAME = re.compile(r"[A-Za-z][\w+#.-]{0,30}")


def main_blocks(tree: HtmlElement, url: str) -> list[_Element]:
    """The page's readable main content as trafilatura's XML blocks (``p``, ``head``,
    ``list``, ``table``, ``code``, ``quote``… with ``hi`` formatting and ``ref`` links kept),
    in order; ``[]`` when none. :func:`blocks_text` gives its text, ``crawler.extract.markup``
    its HTML and markdown: every format of a page comes from this one extraction.

    Read from the page without what a reader never sees (:func:`without_hidden`): hidden
    honeypots, anti-spam spans, hover cards."""
    tree = marked_code(without_hidden(tree))
    blocks = _best(tree, url)
    split = _joined_bodies(tree)
    if split is not None:
        joined = _best(split, url)
        if len(blocks_text(joined)) > len(blocks_text(blocks)):
            blocks = joined
    return blocks


def main_text(tree: HtmlElement, url: str) -> str | None:
    """The page's readable text, paragraphs separated by blank lines; None when none."""
    return blocks_text(main_blocks(tree, url)) or None


def blocks_text(blocks: list[_Element]) -> str:
    """The plain text of ``blocks``: one paragraph (or list item, or table row) per line,
    lines separated by a blank line, spaces squeezed, empty table cells left out."""
    if not blocks:
        return ""
    body = Element("body")
    body.extend(copy.deepcopy(block) for block in blocks)
    etree.strip_tags(body, "ref", "hi")
    for code in body.iter("code"):
        code.text = _CODE_LANGUAGE.sub("", code.text or "")
    raw = xmltotxt(body, include_formatting=False)
    lines = (" ".join(line.split()) for line in raw.splitlines())
    return "\n\n".join(_EMPTY_CELLS.sub("| ", line) for line in lines
                        if line and not _EMPTY_ROW.match(line))


def _best(tree: HtmlElement, url: str) -> list[_Element]:
    precise = _extract(tree, url, favor_precision=True)
    precise_text = blocks_text(precise)
    # a fragment (not nothing: a page of links has no main text) that recall mode may beat,
    # when the page holds twice as much text at all
    if (precise_text and len(precise_text) < FRAGMENT
            and len(precise_text) < SHORT * _visible_length(tree)):
        recalled = _extract(tree, url, favor_precision=False, favor_recall=True)
        if len(precise_text) < SHORT * len(blocks_text(recalled)):
            return recalled
    if _list_like(precise_text):
        return _fill_gaps(precise, _extract(tree, url, favor_precision=False))
    return precise


def _list_like(text: str) -> bool:
    """Mostly short lines: an address block, a contact or spec list, not paragraphs."""
    lines = text.split("\n\n") if text else []
    return bool(lines) and sum(len(line) < SHORT_LINE for line in lines) >= LIST_SHARE * len(lines)


def _fill_gaps(precise: list[_Element], default: list[_Element]) -> list[_Element]:
    """``precise`` with the short blocks default mode keeps *between* two of its blocks put
    back: precision mode drops a company name or a street written without a full stop from
    the middle of an address block, never the boilerplate before or after the main text."""
    precise = [line for block in precise for line in _lines(block)]
    texts = [blocks_text([block]) for block in precise]
    fuller = [(blocks_text([line]), line) for block in default for line in _lines(block)]
    where: dict[str, int] = {}
    for index, (text, _) in enumerate(fuller):
        where.setdefault(text, index)
    known = set(texts)
    filled: list[_Element] = []
    for block, text, following in zip(precise, texts, [*texts[1:], None], strict=True):
        filled.append(block)
        start, end = where.get(text), where.get(following) if following else None
        if start is None or end is None or not 1 <= end - start - 1 <= MAX_GAP:
            continue
        gap = fuller[start + 1:end]
        if all(len(missing) < GAP_LINE and missing not in known for missing, _ in gap):
            filled.extend(block for _, block in gap)
    return filled


def _lines(block: _Element) -> list[_Element]:
    """A paragraph of several lines (``<lb/>``: an address written with ``<br>``) as one
    paragraph per line, so that lines are compared as the text shows them; any other block
    as it is."""
    if block.tag != "p" or block.find("lb") is None:
        return [block]
    lines = [Element("p")]
    lines[0].text = block.text
    for child in block:
        if child.tag == "lb":
            lines.append(Element("p"))
            lines[-1].text = child.tail
            continue
        lines[-1].append(copy.deepcopy(child))
    return [line for line in lines if blocks_text([line])]


def _visible_length(tree: HtmlElement) -> int:
    """Characters of text in the page's body outside scripts and styles: at most what any
    extraction can return."""
    body = tree.find("body")
    total = 0
    for element in (body if body is not None else tree).iter():
        if element.tag not in _INVISIBLE and element.text:
            total += len(element.text)
        if element.tail:
            total += len(element.tail)
    return total


def _extract(tree: HtmlElement, url: str, **mode: bool) -> list[_Element]:
    options = {**TRAFILATURA_OPTIONS, **mode}
    try:
        document = trafilatura.bare_extraction(tree, url=url, include_formatting=True,
                                               include_links=True, **options)
    except Exception:  # trafilatura raises anything on odd markup: keep the rest of the page
        logger.exception("text extraction failed for %s", escaped(url))
        return []
    body = getattr(document, "body", None)
    return [] if body is None else list(body)


def marked_code(tree: HtmlElement) -> HtmlElement:
    """``tree`` with each ``<pre>`` made one ``<span>`` of its text, its language (a
    ``language-x``/``lang-x`` class, ``data-lang``) written first between two
    :data:`CODE_MARK`: trafilatura then reads every ``<pre>`` as code (it takes a ``<pre>``
    of one span for code, anything else by guessing) and keeps its language, which it would
    drop with its attributes. On a copy; ``tree`` itself when it has no ``<pre>``."""
    if next(tree.iter("pre"), None) is None:
        return tree
    tree = copy.deepcopy(tree)
    for pre in list(tree.iter("pre")):
        language = code_language(pre)
        text = pre.text_content()
        tail = pre.tail
        pre.clear()
        pre.tail = tail
        span = etree.SubElement(pre, "span")
        span.text = f"{CODE_MARK}{language}{CODE_MARK}{text}" if language else text
    return tree


def code_language(pre: HtmlElement) -> str:
    """The language a ``<pre>`` (or its ``<code>``) names, lower-case; ``""`` when none."""
    for element in (pre, *pre.iter("code")):
        named = element.get("data-lang") or element.get("data-language") or ""
        match = _LANGUAGE_CLASS.search(element.get("class") or "")
        language = named or (match.group(1) if match else "")
        if _LANGUAGE_NAME.fullmatch(language):
            return language.lower()
    return ""


def _joined_bodies(tree: HtmlElement) -> HtmlElement | None:
    """A copy of ``tree`` where each run of same-class body containers is one container
    (None when the page has no such run). The page's own tree is only read: the runs are
    found by position among its containers, which a copy keeps."""
    groups: dict[tuple[str, str, int], list[int]] = defaultdict(list)
    for index, element in enumerate(tree.iter(*_CONTAINERS)):
        cls = " ".join((element.get("class") or "").split())
        if not cls or not BODY_CLASS.search(cls):
            continue
        ancestors = list(element.iterancestors())
        if any(ancestor.tag in _BESIDE_MAIN for ancestor in ancestors):
            continue  # a "read next" story in an aside is another article
        # one article's parts share its nearest <article> (or <main>, or the page)
        home = next((a for a in ancestors if a.tag in ("article", "main")), None)
        paragraphs = [p for p in element.findall("p")
                      if len(p.text_content().strip()) >= PARAGRAPH_CHARS]
        if len(paragraphs) >= PARAGRAPHS:
            groups[(element.tag, cls, id(home))].append(index)
    runs = [indexes for indexes in groups.values() if len(indexes) > 1]
    if not runs:
        return None
    joined = copy.deepcopy(tree)
    containers = list(joined.iter(*_CONTAINERS))
    for run in runs:
        first, *rest = (containers[index] for index in run)
        for element in rest:
            if first in element.iterancestors() or element in first.iterancestors():
                continue
            first.extend(list(element))
            parent = element.getparent()
            if parent is not None:
                parent.remove(element)
    return joined
