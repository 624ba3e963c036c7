"""Reading the project's documentation (``README.md``, ``docs/*.md``) from tests: a section
under a heading, the code blocks in it, the headings and links of a page.

Lines inside fenced code blocks are never headings or links (a ``# comment`` in a shell block
is not a heading)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import ROOT

_HEADING = re.compile(r"^(#{1,6}) +(.+?) *#* *$")
_FENCE = re.compile(r"^ *(```|~~~)")


def pages() -> list[Path]:
    """Every page of the documentation: the README, bench's index and ``docs/*.md``."""
    return [ROOT / "README.md", ROOT / "bench" / "README.md",
            *sorted((ROOT / "docs").glob("*.md"))]


def prose_lines(text: str) -> Iterator[tuple[str, bool]]:
    """Each line of ``text`` with whether it is outside a fenced code block."""
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            yield line, False
        else:
            yield line, not fenced


def headings(text: str) -> list[tuple[int, str]]:
    """(level, title) of each heading of a Markdown text, in order."""
    found = []
    for line, prose in prose_lines(text):
        match = _HEADING.match(line) if prose else None
        if match:
            found.append((len(match.group(1)), match.group(2)))
    return found


def section(page: str, heading: str) -> str:
    """The text under ``heading`` (its title as written, any level) of ``page`` (a path from
    the repository root), up to the next heading of the same or a higher level."""
    text = (ROOT / page).read_text(encoding="utf-8")
    lines, level, kept = list(prose_lines(text)), None, []
    for line, prose in lines:
        match = _HEADING.match(line) if prose else None
        if level is None:
            if match and match.group(2) == heading:
                level = len(match.group(1))
            continue
        if match and len(match.group(1)) <= level:
            break
        kept.append(line)
    assert level is not None, f"{page} has no heading {heading!r}"
    return "\n".join(kept) + "\n"


def doc_code(page: str, heading: str, language: str) -> str:
    """The first ``language`` code block under ``heading`` of ``page``."""
    match = re.search(rf"```{language}\n(.*?)```", section(page, heading), re.S)
    assert match, f"no {language} block under {heading!r} in {page}"
    return match.group(1)


def anchor(title: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped (``-`` and ``_``
    kept), each space a hyphen."""
    text = re.sub(r"[`*]", "", title).strip().lower()
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link: its text
    text = "".join(ch for ch in text if ch.isalnum() or ch in " -_")
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading anchor of a page (a repeated title gets ``-1``, ``-2``… as on GitHub)."""
    seen: dict[str, int] = {}
    found = set()
    for _, title in headings(text):
        base = anchor(title)
        count = seen.get(base, 0)
        found.add(base if count == 0 else f"{base}-{count}")
        seen[base] = count + 1
    return found
