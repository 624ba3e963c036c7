"""Blocks repeated across a crawl's pages (a cookie notice, a "subscribe" box, the same
sidebar), found by their fingerprints and removed from a page's text, markdown and HTML.

A *unit* is what a reader sees as one block: a paragraph, a list item, a heading, a row of a
table (a line of ``text``, a line of ``markdown`` outside code blocks, a ``p``/``li``/``tr``/
``h1``… element of ``html``). Its fingerprint is a hash of its plain text, whitespace
squeezed: the same on every page, and in every format for a paragraph or a heading (a list
item or a table row is written "- Home" or "| a | b |" in text and markdown, "Home" or "ab"
in html: one fingerprint per writing, each on the same pages, so counted alike).
Which fingerprints are repeated is the crawl's business (:mod:`collecting.repeats`); this
module only reads units and removes the repeated ones. Pure functions of a page's ``data``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Set
from typing import Any

from lxml import etree
from lxml.html import HtmlElement, fragments_fromstring, tostring

from crawler.extract.markup import plain_text

#: Units of each format of a page that are counted.
MAX_UNITS = 2000
#: The formats whose units are counted and cleaned.
FORMATS = ("text", "markdown", "html")
#: Elements of ``html`` that are one unit each (when they hold no other block).
_UNIT_TAGS = ("p", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "dt", "dd", "blockquote")
_BLOCKS = frozenset({*_UNIT_TAGS, "ul", "ol", "dl", "table", "pre", "div"})
_CONTAINERS = frozenset({"ul", "ol", "dl", "table", "tbody", "thead", "tfoot"})
_FENCE = re.compile(r"^\s*(```|~~~)")
_TABLE_RULE = re.compile(r"^\|?(?:\s*:?-{3,}:?\s*\|)+\s*$")
_BLANK_LINES = re.compile(r"\n{3,}")


def fingerprint(unit_text: str) -> str:
    """The fingerprint of a unit's plain text (whitespace squeezed): 16 hex digits."""
    squeezed = " ".join(unit_text.split())
    return hashlib.blake2b(squeezed.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def page_units(data: dict[str, Any] | None) -> set[str]:
    """The fingerprints of the units of a page's formats (each once; at most
    :data:`MAX_UNITS` of each format, from its start: a template's blocks are among them, and
    a page of a million lines costs the crawl's counts no more than a long one)."""
    found: set[str] = set()
    if not data:
        return found
    for name in FORMATS:
        value = data.get(name)
        if isinstance(value, str) and value:
            found.update(map(fingerprint, format_units(name, value)[:MAX_UNITS]))
    return found


def format_units(name: str, value: str) -> list[str]:
    """The plain text of each unit of one format's ``value`` (``name``: one of :data:`FORMATS`),
    in page order: what :func:`page_units` fingerprints (bench/repeated_blocks.py reads them)."""
    return [unit for unit in _UNITS[name](value) if unit.strip()]


def without_repeated(data: dict[str, Any] | None, repeated: Set[str]
                     ) -> dict[str, Any] | None:
    """``data`` with every unit whose fingerprint is in ``repeated`` removed from its text,
    markdown and HTML (a format left empty becomes None); ``data`` itself when nothing is."""
    if not data or not repeated:
        return data
    cleaned = dict(data)
    for name in FORMATS:
        value = data.get(name)
        if isinstance(value, str) and value:
            cleaned[name] = _CLEANERS[name](value, repeated) or None
    return cleaned if cleaned != data else data


# --- text: one unit a paragraph (list item, table row) -------------------------------------

def _text_units(text: str) -> Iterator[str]:
    yield from text.split("\n\n")


def _clean_text(text: str, repeated: Set[str]) -> str:
    return "\n\n".join(line for line in text.split("\n\n")
                       if not line.strip() or fingerprint(line) not in repeated).strip()


# --- markdown: one unit a line, outside code blocks -------------------------------------------

def _markdown_lines(markdown: str) -> Iterator[tuple[str, str | None]]:
    """Each line, and its unit's plain text (None for a line that is no unit: in a code
    block, a fence, a table's rule, a blank)."""
    in_code = False
    for line in markdown.split("\n"):
        if _FENCE.match(line):
            in_code = not in_code
            yield line, None
        elif in_code or not line.strip() or _TABLE_RULE.match(line):
            yield line, None
        else:
            yield line, plain_text(line)


def _markdown_units(markdown: str) -> Iterator[str]:
    return (unit for _, unit in _markdown_lines(markdown) if unit)


def _clean_markdown(markdown: str, repeated: Set[str]) -> str:
    kept = [line for line, unit in _markdown_lines(markdown)
            if not unit or fingerprint(unit) not in repeated]
    return _BLANK_LINES.sub("\n\n", "\n".join(kept)).strip()


# --- html: one unit an element of :data:`_UNIT_TAGS` that holds no other block ----------------

def _units_of(elements: list[Any]) -> Iterator[HtmlElement]:
    for element in elements:
        if not isinstance(element, HtmlElement):
            continue
        for node in element.iter(*_UNIT_TAGS):
            if not any(child.tag in _BLOCKS for child in node.iterdescendants()):
                yield node


def _parsed(html: str) -> list[Any]:
    try:
        return fragments_fromstring(html)
    except (etree.ParserError, ValueError):
        return []


def _html_units(html: str) -> Iterator[str]:
    return (node.text_content() for node in _units_of(_parsed(html)))


def _clean_html(html: str, repeated: Set[str]) -> str:
    parts = _parsed(html)
    gone = [node for node in _units_of(parts) if fingerprint(node.text_content()) in repeated]
    if not gone:
        return html
    for node in gone:  # the parts share a parent (fragments_fromstring's): a dropped part
        parent = node.getparent()  # is left detached, and out of what is written back
        if parent is None:
            continue
        node.drop_tree()
        while parent.tag in _CONTAINERS and not len(parent) and not (parent.text or "").strip():
            emptied, parent = parent, parent.getparent()  # a list or table left empty goes too
            emptied.drop_tree()
            if parent is None:
                break
    kept = [part for part in parts if isinstance(part, str) or part.getparent() is not None]
    return "\n".join(part if isinstance(part, str) else tostring(
        part, encoding="unicode", method="html").strip() for part in kept
        if not isinstance(part, str) or part.strip()).strip()


_UNITS = {"text": _text_units, "markdown": _markdown_units, "html": _html_units}
_CLEANERS = {"text": _clean_text, "markdown": _clean_markdown, "html": _clean_html}
