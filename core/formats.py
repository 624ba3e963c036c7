"""Plain-data helpers both the crawler and the API use: reading nested JSON, and the times of
the HTTP contract.

Dependency-light on purpose (standard library only): the API process imports it and must
stay free of Scrapy, Twisted and the extraction libraries (``tests/test_api_imports.py``).
"""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime
from typing import Any

#: How the contract writes every time: ISO 8601, UTC, whole seconds, ``Z``.
CONTRACT_TIME = "%Y-%m-%dT%H:%M:%SZ"


def format_utc(moment: datetime) -> str:
    """``moment`` as the contract writes times; a naive datetime is taken as UTC (SQLite gives
    naive UTC, PostgreSQL and providers aware times)."""
    moment = moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
    return moment.strftime(CONTRACT_TIME)


def utc_now() -> str:
    """Now, as the contract writes times: ``2026-11-21T08:30:00Z``."""
    return format_utc(datetime.now(UTC))


def iso_utc(value: object) -> str | None:
    """ISO 8601 with an offset → the contract's UTC form; a bare date, a time without an
    offset, or anything unreadable is kept as found (whitespace collapsed): there is no zone
    to convert it from, and guessing one would shift the date. None for non-strings and
    blank strings."""
    text = " ".join(value.split()) if isinstance(value, str) else ""
    if not text:
        return None
    try:
        parsed = datetime.fromisoformat(text)
    except (ValueError, OverflowError):
        return text
    if parsed.tzinfo is None:
        return text
    try:
        return format_utc(parsed)
    except OverflowError:  # year 1 or 9999 with an offset that leaves the calendar
        return text


def dig(node: Any, *path: str | int) -> Any:
    """``node[p0][p1]…`` through dicts (str steps) and lists (int steps); None as soon as a
    step is missing or of the wrong type. JSON from pages and APIs is read with it."""
    for step in path:
        if isinstance(step, int):
            node = node[step] if isinstance(node, list) and -len(node) <= step < len(node) else None
        else:
            node = node.get(step) if isinstance(node, dict) else None
        if node is None:
            return None
    return node


#: First characters that make a spreadsheet read a cell as a formula (OWASP, "CSV injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: str) -> str:
    """A text cell a spreadsheet shows as text: one that would start a formula gets a ``'``
    in front (docs/api.md, Export: cells that start with ``=``, ``+``, ``-``, ``@``, tab or CR are
    neutralised); page text is written by strangers.

    What counts is the first character a reader sees: whitespace (NBSP included) and Unicode
    format characters (category Cf: zero-width space, joiners, word joiner, BOM, direction
    marks…) in front of it are looked past, as a spreadsheet may drop them before reading a
    formula. Tab and CR start a formula wherever they stand among them."""
    if value[:1].isalnum():  # most cells: a letter or digit first, seen at once
        return value
    for char in value:
        if char in FORMULA_STARTS:
            return f"'{value}"
        if not (char.isspace() or unicodedata.category(char) == "Cf"):
            return value
    return value
