"""Change tracking's rules (``core.changes``): what counts as the same page, the diff, and
their bounds on a hostile page."""

from __future__ import annotations

from core import changes

PAGE = """# Tide tables

High water at 06:12, low water at 12:30.

Updated on 3 March 2026.

© 2025 Harbour Tide Ltd. All rights reserved.
<form><input type="hidden" value="a8F3kq9Zx0Lm2Pq7Rt5Vw1Yb"></form>"""


def test_whitespace_years_and_tokens_do_not_make_a_page_changed():
    moved = (PAGE.replace("High water", "High   water").replace("© 2025", "© 2026")
             .replace("a8F3kq9Zx0Lm2Pq7Rt5Vw1Yb", "Zz91kq9Zx0Lm2Pq7Rt5Vw1Q8") + "\n\n\n")
    assert changes.digest(moved) == changes.digest(PAGE)
    assert changes.compare(moved, (changes.digest(PAGE), PAGE, "2026-11-01T00:00:00Z")) \
        == changes.Change("same", "2026-11-01T00:00:00Z")
    for copyright_line in ("Copyright 2019-2025 Harbour", "(c) 2024, 2025 Harbour"):
        assert changes.normalised(copyright_line).startswith("©")


def test_the_content_itself_makes_it_changed_with_a_unified_diff():
    edited = PAGE.replace("12:30", "12:45").replace("3 March", "4 March")  # dates are content
    change = changes.compare(edited, (changes.digest(PAGE), PAGE, "2026-11-01T00:00:00Z"))
    assert change.status == "changed" and change.previous_fetched_at == "2026-11-01T00:00:00Z"
    assert "-High water at 06:12, low water at 12:30." in change.diff
    assert "+High water at 06:12, low water at 12:45." in change.diff
    assert change.diff.startswith("--- previous\n+++ current")
    assert changes.compare(PAGE, None) == changes.Change("new")
    assert changes.compare(PAGE, None).as_dict() == {"status": "new",
                                                      "previous_fetched_at": None, "diff": None}


def test_a_hostile_page_s_diff_is_bounded_in_size():
    """200,000 changed lines: the diff compares the first MAX_DIFF_LINES of each side (what
    bounds its time) and is cut at MAX_DIFF_BYTES, saying so."""
    before = "\n".join(f"line {n} of a long page" for n in range(200_000))
    after = "\n".join(f"line {n} of a long page, edited" for n in range(200_000))
    diff = changes.unified_diff(before, after)
    assert len(diff.encode()) <= changes.MAX_DIFF_BYTES and diff.endswith(changes.CUT)
    assert "line 4999 of" not in diff  # never reached: cut before
