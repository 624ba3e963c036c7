"""Counts and durations as pages and providers write them (``core.numbers``): the
values no count or duration can be are unknown (None), never an exception or a number past
what a client's 64-bit integer holds."""

from __future__ import annotations

import pytest

from core.numbers import parse_count, parse_duration


@pytest.mark.parametrize(("value", "expected"), [
    (1234, 1234), ("1,234 likes", 1234), ("1500000000", 1500000000), ("1.2M", None),
    (-5, None), (True, None), (float("nan"), None),
    ("1" * 5000, None),  # int() refuses 4,300 digits: it raised ValueError
    (10**30, None), (1e30, None),  # past a 64-bit count
])
def test_parse_count(value, expected):
    assert parse_count(value) == expected


@pytest.mark.parametrize(("value", "expected"), [
    (213, 213), ("3:33", 213), ("PT3M33S", 213), ("P1DT2H", 93600), ("0", None),
    (10**400, None),  # a JSON integer float() cannot hold: it raised OverflowError
    (1e300, None), ("P99999999999999999999999W", None), ("9" * 400, None),
])
def test_parse_duration(value, expected):
    assert parse_duration(value) == expected
