"""Normalisers for the numbers pages and APIs write as text: counts and durations.

Small pure functions shared by the video extractor and the search adapters, so "1,234",
"1.5M"-free exact counts and every duration notation are read one way everywhere.
"""

from __future__ import annotations

import math
import re

_DIGITS = re.compile(r"\d[\d,.\u00a0\u202f' ]*")
_ISO_DURATION = re.compile(
    r"P(?:(?P<weeks>\d+)W)?(?:(?P<days>\d+)D)?"
    r"(?:T(?:(?P<hours>\d+)H)?(?:(?P<minutes>\d+)M)?(?:(?P<seconds>\d+(?:\.\d+)?)S)?)?",
    re.IGNORECASE,
)
_CLOCK = re.compile(r"(?:(\d+):)?(\d{1,2}):(\d{1,2})")
#: The largest count: what a client's 64-bit integer holds (a larger one is no count).
MAX_COUNT = 2**63 - 1
#: The longest duration, in seconds (about 31 years): nothing longer is a video.
MAX_DURATION = 10**9


def parse_count(value: object) -> int | None:
    """An exact count from an int or a string such as ``"1500000000"`` or ``"1,234 likes"``.

    Abbreviated counts ("1.2M", "12K") are not exact and give None: a missing count is
    reported as unknown, never guessed. Booleans and negative numbers are not counts.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value <= MAX_COUNT else None
    if isinstance(value, float):
        whole = math.isfinite(value) and value >= 0 and value.is_integer()
        return int(value) if whole and value <= MAX_COUNT else None
    if not isinstance(value, str):
        return None
    match = _DIGITS.search(value)
    if match is None:
        return None
    rest = value[match.end():].strip()[:1]
    if rest and rest.upper() in "KMB\u0e1e\u4e07":  # 1.2K, 3M, 4B: abbreviated, not exact
        return None
    digits = re.sub(r"\D", "", match.group())
    if not digits or len(digits.lstrip("0")) > len(str(MAX_COUNT)):  # int() refuses 4,300
        return None
    count = int(digits)
    return count if count <= MAX_COUNT else None


def parse_duration(value: object) -> int | None:
    """Whole seconds from ``213``, ``"213"``, ``"3:33"``, ``"03:45:00"`` or ``"PT3M33S"``
    (also ``"P1DT2H"``); None for anything else, and for live streams' ``"0"``/``"P0D"``."""
    seconds: float | None = None
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            seconds = float(value)
        except OverflowError:  # a JSON integer of hundreds of digits
            return None
    elif isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"\d+(?:\.\d+)?", text):
            seconds = float(text)
        elif (clock := _CLOCK.fullmatch(text)) is not None:
            hours, minutes, secs = (int(part or 0) for part in clock.groups())
            seconds = hours * 3600 + minutes * 60 + secs
        elif text[:1] in "Pp" and (iso := _ISO_DURATION.fullmatch(text)) is not None:
            parts = {k: float(v) for k, v in iso.groupdict().items() if v}
            if parts:
                seconds = (parts.get("weeks", 0) * 604800 + parts.get("days", 0) * 86400
                           + parts.get("hours", 0) * 3600 + parts.get("minutes", 0) * 60
                           + parts.get("seconds", 0))
    if seconds is None or not math.isfinite(seconds) or not 0 < seconds <= MAX_DURATION:
        return None  # JSON allows NaN; past MAX_DURATION is no video's length
    return round(seconds)
