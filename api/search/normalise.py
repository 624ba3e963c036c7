"""Normalisers shared by every search adapter: text, URLs and dates.

Providers write the same things differently (``<strong>`` tags in Brave's descriptions, HTML
entities in YouTube's titles, naive timestamps in SearXNG and Brave, relative ages such as
"2 hours ago"); these functions read all of them one way, so results look alike whichever
provider the deployment uses.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

from w3lib.html import remove_tags, replace_entities

from core.formats import format_utc
from core.video_platform import parse_video_url

_SPACE = re.compile(r"\s+")
_DATE_ONLY = re.compile(r"\d{4}-\d{2}-\d{2}")
#: Relative ages precise to the second or the minute: the only ones resolved to a time.
#: "2 hours ago" may mean anything from 2:00 to 2:59 ago, so a timestamp made from it would
#: claim a precision the provider never had; hours, days and longer are kept as given.
_EXACT_AGE = re.compile(
    r"(?P<count>\d+|an?|one)\s+(?P<unit>seconds?|secs?|minutes?|mins?)\s+ago", re.IGNORECASE
)
_JUST_NOW = frozenset({"just now", "now", "moments ago", "a moment ago"})
#: Absolute dates written out in words, as some providers' ``age`` fields do.
_WORDY_DATES = ("%B %d, %Y", "%b %d, %Y", "%d %B %Y", "%d %b %Y")


def clean_text(value: object) -> str | None:
    """Plain text from a provider's title or snippet: tags removed, entities decoded, runs of
    whitespace made one space. None for anything that is not a non-blank string."""
    if not isinstance(value, str):
        return None
    text = _SPACE.sub(" ", replace_entities(remove_tags(value))).strip()
    return text or None


def web_url(value: object) -> str | None:
    """``value`` when it is an absolute http(s) URL (protocol-relative made https), else None.

    Results and thumbnails with anything else (``""``, ``javascript:``…) are not useful to a
    client and are dropped rather than passed on.
    """
    if not isinstance(value, str):
        return None
    url = value.strip()
    if url.startswith("//"):
        url = "https:" + url
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- reading it validates it ("https://e.com:abc/" raises)
    except ValueError:
        return None
    return url if parts.scheme in ("http", "https") and parts.hostname else None


def host_of(url: str) -> str | None:
    """The host of ``url`` without ``www.``: a publisher's name when the provider gives none."""
    host = urlsplit(url).hostname
    return host.removeprefix("www.") if host else None


def dedupe_key(url: str) -> str:
    """What makes two result URLs the same page.

    Scheme, ``www.``, the fragment and a trailing slash do not make a different page, and
    every link form of one YouTube video (watch, youtu.be, shorts, embed…) is that video.
    The query string is kept: on many sites it selects the page.
    """
    video_id = parse_video_url(url)
    if video_id:
        return f"youtube:{video_id}"
    parts = urlsplit(url)
    host = (parts.hostname or "").removeprefix("www.")
    port = f":{parts.port}" if parts.port and parts.port not in (80, 443) else ""
    query = f"?{parts.query}" if parts.query else ""
    return f"{host}{port}{parts.path.rstrip('/')}{query}"


def http_date(value: str | None) -> datetime | None:
    """The time of an HTTP ``Date`` header, or None when it is missing or unreadable."""
    if not value:
        return None
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def published_at(value: object, received_at: datetime) -> str | None:
    """A provider's publication date as the contract wants it, else the provider's text.

    - ISO 8601 and RFC 2822 times → ``2026-01-15T14:30:00Z``. Naive times (SearXNG's
      ``publishedDate``, Brave's ``page_age``) carry no zone; both providers write UTC, so
      they are taken as UTC.
    - A date alone (``2026-01-15``, ``January 15, 2026``) → ``2026-01-15``: no time is invented.
    - "just now", "30 seconds ago", "5 minutes ago" → resolved against ``received_at`` (the
      provider's ``Date`` header); coarser ages ("2 hours ago", "3 days ago") are kept as given.
    - Anything else non-blank is returned as given, and so is a time past what a date can be
      ("99999999999999 minutes ago", year 1 at +14:00); blank or missing → None.
    """
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    try:
        return _normalised(text, received_at)
    except OverflowError:
        return text


def _normalised(text: str, received_at: datetime) -> str:
    if text.lower() in _JUST_NOW:
        return format_utc(received_at)
    if (age := _EXACT_AGE.fullmatch(text)) is not None:
        count = age["count"].lower()
        amount = int(count) if count.isdigit() else 1
        unit = 60 if age["unit"].lower().startswith("min") else 1
        return format_utc(received_at - timedelta(seconds=amount * unit))
    absolute = _absolute(text)
    if isinstance(absolute, datetime):
        return format_utc(absolute)
    if isinstance(absolute, date):
        return absolute.isoformat()
    return text


def _absolute(text: str) -> datetime | date | None:
    if _DATE_ONLY.fullmatch(text):
        try:
            return date.fromisoformat(text)
        except ValueError:
            return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        pass
    for layout in _WORDY_DATES:
        try:
            return datetime.strptime(text, layout).date()
        except ValueError:
            continue
    return http_date(text)
