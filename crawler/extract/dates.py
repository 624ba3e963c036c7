"""A page's dates (``published_at``, ``modified_at``) in the contract's forms.

Pages write dates every way there is: ``2024-03-05T09:30:00+01:00``, ``2020.07.23``,
``Tue, 10 Oct 2006 10:00:00 GMT``, ``October 10, 2006``, ``23.07.2020 14:05``. A client
should not have to parse them again, so each becomes one of three forms:

- a moment with a known offset: UTC, ``2024-03-05T08:30:00Z`` (the contract's time form);
- a date without a time: ``2020-07-23`` (ISO 8601 calendar date; no zone is invented, which
  could move it to another day);
- a time without an offset: ``2019-11-20T06:37:00``, as the page wrote it, in ISO form but
  without ``Z``: the page's local time, whose zone the page does not say.

Anything that is not a whole date (a bare year, "yesterday", text) gives None. Parsing is
python-dateutil's (a trafilatura dependency already), not new code; the one judgement made here
is which fields the text really held: dateutil fills missing ones from a default, so the
text is parsed against two different defaults and a field that changes with the default was
not in the text.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from dateutil import parser as dateparser

from core.formats import format_utc

#: Two defaults that differ in every field: what dateutil takes from them was not written.
_DEFAULTS = (datetime(2001, 1, 1, 0, 0, 0), datetime(2002, 2, 2, 1, 1, 1))
#: ``23.07.2020`` and ``23.7.20``: dotted dates put the day first wherever they are written.
_DOTTED_DAY_FIRST = re.compile(r"^\s*\d{1,2}\.\d{1,2}\.\d{2,4}\b")
#: Unix timestamps some pages put in ``data-time`` style attributes and JSON-LD.
_EPOCH = re.compile(r"^\d{10}(\.\d+)?$")
#: The earliest and latest years a page's date can plausibly carry.
_YEARS = range(1990, 2101)


def page_date(value: object) -> str | None:
    """``value`` (a string from the page) as the contract writes dates; None when it is not
    a whole date."""
    text = " ".join(value.split()) if isinstance(value, str) else ""
    if not text or len(text) > 80:
        return None
    if _EPOCH.match(text):
        moment = datetime.fromtimestamp(float(text), UTC)
        return _moment(moment) if moment.year in _YEARS else None
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        parsed = None
    if parsed is not None:  # ISO 8601: its own fields say what it holds
        if parsed.year not in _YEARS:
            return None
        if "T" not in text and " " not in text and len(text) <= 10:
            return parsed.date().isoformat()
        return _moment(parsed)
    return _free_form(text)


def _free_form(text: str) -> str | None:
    day_first = bool(_DOTTED_DAY_FIRST.match(text))
    try:
        one, two = (dateparser.parse(text, default=default, dayfirst=day_first)
                    for default in _DEFAULTS)
    except (ValueError, OverflowError, TypeError):
        return None
    if (one.year, one.month, one.day) != (two.year, two.month, two.day):
        return None  # a year or a month alone is not a date
    if one.year not in _YEARS:
        return None
    if (one.hour, one.minute) != (two.hour, two.minute):
        return one.date().isoformat()  # no time in the text
    return _moment(one)


def _moment(moment: datetime) -> str:
    if moment.tzinfo is None:
        return moment.replace(microsecond=0).isoformat()
    return format_utc(moment)
