"""The text a reader of a page sees, for the contact extractors to read addresses, numbers
and handles in, and the two ways of reading it that inline markup calls for; and the page
without what a reader never sees, for the readable text (:func:`without_hidden`).

Not visible: ``<head>``, scripts, styles, templates, SVG, comments, any element with the
``hidden`` attribute, any element whose inline style hides it (``display: none``,
``visibility: hidden``), and any element of a class the page's own ``<style>`` blocks hide
(``.nospam { display: none }``: a rule of plain class selectors, outside ``@media``) and no
rule shows again (see :func:`page_styles`). Hidden
spans are the usual anti-spam trick inside an address
(``info<span style="display:none">-remove-</span>@acme.de``, or the same with a class) and the
usual home of honeypot addresses; a reader never sees them, so neither do we. (A class hidden
by an external stylesheet stays in: that needs CSS the page does not carry. A class hidden only
under ``@media`` stays in too: it shows on some screens.)

Blocks (``<p>``, ``<td>``, ``<br>``…) are separated by line breaks, and every other element
boundary is marked with :data:`BOUNDARY`, so :func:`in_text` can read the text twice: inline
elements glued (``<b>info</b>@example.org`` is one address) and spaced
(``<i>info@acme.com</i><i>Call</i>`` is not ``acme.comCall``). Spaced matches win; a glued one
counts only where no spaced match overlaps it: an element boundary ends a token unless the
token only exists across it.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple, TypeVar

from lxml import etree
from lxml.html import HtmlElement

_HIDDEN_TAGS = frozenset({"head", "script", "style", "template", "svg"})
_BLOCK_TAGS = frozenset({
    "address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt", "fieldset",
    "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header",
    "hr", "li", "main", "nav", "ol", "option", "p", "pre", "section", "table", "td", "th",
    "tr", "ul",
})
_HIDDEN_STYLE = re.compile(r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\b",
                           re.IGNORECASE)
#: A stylesheet's braces, a selector that is one class (of one element type, or any), any
#: class named in a selector, and declarations that show an element.
_BRACES = re.compile(r"[{}]")
_CLASS_NAME = re.compile(r"\.(-?[_a-zA-Z][\w-]*)")
_SHOWING = re.compile(r"(?:^|;)\s*(?:display\s*:\s*(?!none\b)[a-z]|visibility\s*:\s*visible)",
                      re.IGNORECASE)
_CLASS_SELECTOR = re.compile(r"(?:[a-zA-Z][a-zA-Z0-9]*)?\.(-?[_a-zA-Z][\w-]*)")
#: Most characters of text an element may hold for :func:`without_hidden` to remove it.
MOST_HIDDEN = 1000
#: Elements an attribute may hide (``hidden``, an inline style), and any with a class.
_MAY_HIDE = etree.XPath("//*[@hidden or @style]")
_CLASSED = etree.XPath("//*[@class]")
#: Most hidden classes looked for with one XPath test each (see ``_hidden_elements``).
MOST_CLASS_TESTS = 32
#: Never removed, even hidden: a page hidden until its scripts have loaded is still read.
_KEPT_WHOLE = frozenset({"html", "body", "main"})
#: A selector that applies only while the reader points at, focuses or presses something.
_INTERACTION = re.compile(r":(?:hover|focus|focus-within|focus-visible|active)\b", re.IGNORECASE)
#: Stands for an inline element boundary in the visible text; the parsed page never holds a
#: NUL (lxml drops it, and control characters in general), so the page's own text cannot.
BOUNDARY = "\x00"

_T = TypeVar("_T")
Span = tuple[int, int, _T]  # start, end, value: a match in one rendering of the text


def visible_text(root: HtmlElement) -> str:
    """The text a reader sees: blocks on their own lines, inline element boundaries marked
    with :data:`BOUNDARY` (for :func:`in_text`)."""
    styles = page_styles(root)
    parts: list[str] = []
    stack: list[tuple[HtmlElement, bool]] = [(root, False)]
    while stack:  # iterative: deeply nested markup must not hit the recursion limit
        element, closing = stack.pop()
        tag = element.tag if isinstance(element.tag, str) else ""
        if not closing and tag and tag not in _HIDDEN_TAGS and not _hidden(element, styles):
            parts.extend((_boundary(tag), element.text or ""))
            stack.append((element, True))
            stack.extend((child, False) for child in reversed(element))
            continue
        parts.extend((_boundary(tag), element.tail or ""))  # also after a hidden element
    return "".join(parts)


class PageStyles(NamedTuple):
    """What the page's own ``<style>`` blocks say of classes (see :func:`page_styles`)."""

    hidden: frozenset[str]
    shown: frozenset[str]

    def hide(self, classes: str | None) -> bool:
        """Whether an element of ``classes`` is surely hidden: one of them is hidden, and
        none is one that some rule shows (``class="d-none d-md-block"`` shows on wide
        screens)."""
        if not (self.hidden and classes):
            return False
        names = set(classes.split())
        return not names.isdisjoint(self.hidden) and names.isdisjoint(self.shown)


def page_styles(root: HtmlElement, on_interaction: bool = True) -> PageStyles:
    """The classes the page's own ``<style>`` blocks surely hide, and those any rule shows.

    ``on_interaction``: whether a rule that shows a class only under ``:hover``, ``:focus``
    or ``:active`` counts. For the contact extractors it does (a reader can see the card an
    address is in); for the readable text it does not: a hover card (``.person:hover
    .person__card``) is not the page's text, and glued to its link it became "Kristi
    NoemKristi Lynn Noem is…" at the start of an article.

    Hidden: named by a top-level rule whose every selector is a plain class (``.nospam``,
    ``span.nospam``) and that hides, and by no rule anywhere (a later one, one under
    ``@media``, a compound selector such as ``.menu.open``) that shows. Style blocks for
    print, or inert ones (in ``<noscript>``, ``<template>``), are not read.

    Read in one pass over the braces, never with a regex over whole rules: a page is anyone's
    text, and a pattern that backtracks over a long style block (no closing brace, an
    unclosed comment) would hold the worker on one page."""
    hidden: set[str] = set()
    shown: set[str] = set()
    for style in root.iter("style"):
        if not _for_screens(style):
            continue
        css = _without_comments(style.text or "")
        open_blocks: list[str] = []  # the preludes (selectors, at-rules) of the open blocks
        last = 0
        for brace in _BRACES.finditer(css):
            text, last = css[last:brace.start()], brace.end()
            if brace.group() == "{":
                open_blocks.append(text.rsplit(";", 1)[-1].strip())
                continue
            if not open_blocks:
                continue  # a stray closing brace
            prelude = open_blocks.pop()
            declarations = text.replace("!important", "")
            if _SHOWING.search(declarations):
                shown.update(name for part in prelude.split(",")
                             if on_interaction or not _INTERACTION.search(part)
                             for name in _CLASS_NAME.findall(part))
            if open_blocks or prelude.startswith("@"):
                continue  # inside @media (shown on some screens) or any other at-rule
            names = [_CLASS_SELECTOR.fullmatch(part.strip()) for part in prelude.split(",")]
            if all(names) and _HIDDEN_STYLE.search(declarations):
                hidden.update(name.group(1) for name in names if name)
    return PageStyles(frozenset(hidden - shown), frozenset(shown))


def without_hidden(root: HtmlElement) -> HtmlElement:
    """``root`` without the elements a reader never sees (see the module; a class shown
    only on interaction counts as hidden), on a copy; ``root`` itself when it has none.
    Each removed element's tail text stays where it was.

    Only short ones (up to :data:`MOST_HIDDEN` characters) are removed: a card, a promo, an
    anti-spam span, a honeypot. Much text hidden is content a script shows (a tab, "read
    more", a whole article revealed after loading), which extraction read until now."""
    styles = page_styles(root, on_interaction=False)
    copied = copy.deepcopy(root)  # cheaper than looking twice (three pages in four hide some)
    hidden = [element for element in _hidden_elements(copied, styles)
              if element.tag not in _KEPT_WHOLE and element.get("hidden") != "until-found"
              and len(element.text_content()) <= MOST_HIDDEN]
    for element in hidden:
        if element.getparent() is not None:  # not the root, not one found twice
            element.drop_tree()  # one inside another removed already: a detached tree
    return copied if hidden else root


def _hidden_elements(root: HtmlElement, styles: PageStyles) -> list[HtmlElement]:
    """The elements of ``root`` hidden by an attribute or by a class ``styles`` hides;
    candidates found by XPath (a walk over every element in Python cost a millisecond a
    page), then checked. A page hiding many classes has every element with a class checked
    instead: one XPath test per class is the page's to make long (libxml2 refuses a few
    thousand, and the time grows with classes times elements)."""
    found = [element for element in _MAY_HIDE(root) if _hidden(element)]
    if len(styles.hidden) > MOST_CLASS_TESTS:
        candidates = _CLASSED(root)
    elif styles.hidden:
        tests = " or ".join(f"contains(@class, '{name}')" for name in sorted(styles.hidden))
        candidates = root.xpath(f"//*[{tests}]")
    else:
        candidates = []
    found += (element for element in candidates if styles.hide(element.get("class")))
    return found


def _for_screens(style: HtmlElement) -> bool:
    """Whether a ``<style>`` applies to the page on a screen: not ``media="print"``, not
    inside ``<noscript>`` or ``<template>``."""
    media = (style.get("media") or "all").strip().lower()
    if not (media in ("all", "screen") or media.startswith(("all ", "screen "))):
        return False
    return not any(ancestor.tag in ("noscript", "template")
                   for ancestor in style.iterancestors())


def _without_comments(css: str) -> str:
    """``css`` without its ``/* … */`` comments (they do not nest; an unclosed one runs to
    the end), in one pass."""
    first, *rest = css.split("/*")
    kept = [first]
    for part in rest:
        end = part.find("*/")
        if end >= 0:
            kept.append(part[end + 2:])
    return "".join(kept)


def _hidden(element: HtmlElement, styles: PageStyles | None = None) -> bool:
    if element.get("hidden") is not None:
        return True
    style = element.get("style")
    if style and _HIDDEN_STYLE.search(style) is not None:
        return True
    return styles is not None and styles.hide(element.get("class"))


def _boundary(tag: str) -> str:
    """A line break for a block's start or end, a boundary mark for any other element's."""
    return "\n" if tag in _BLOCK_TAGS else BOUNDARY if tag else ""


def in_text(text: str, find: Callable[[str], Iterable[Span[_T]]]) -> Iterator[_T]:
    """What ``find`` reads in ``text`` with inline boundaries as spaces, plus what it reads
    with them glued where the spaced reading found nothing overlapping; in page order."""
    spaced = list(find(text.replace(BOUNDARY, " ")))  # same offsets as ``text``
    origin = [offset for offset, char in enumerate(text) if char != BOUNDARY]
    glued = [(origin[start], origin[end - 1] + 1, value)
             for start, end, value in find(text.replace(BOUNDARY, "")) if end > start]
    taken = {offset for start, end, _ in spaced for offset in range(start, end)}
    extra = [match for match in glued if taken.isdisjoint(range(match[0], match[1]))]
    for _, _, value in sorted(spaced + extra, key=lambda match: match[0]):
        yield value
