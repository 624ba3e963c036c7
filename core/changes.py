"""Whether a page changed between two crawls, and how: the rules of change tracking, pure and
framework-free (docs/api.md, Change tracking; collecting.changes applies them).

**Same or changed** compares the page's content (its markdown, else its text) *normalised*:
Unicode NFC; every run of whitespace one space; blank lines and surrounding spaces dropped;
and the parts of a page that move on every visit without its content changing masked:

- copyright years (``© 2024``, ``Copyright 2019-2026``): a site's footer changes every
  January, not its pages;
- tokens: runs of 24 or more letters, digits, ``-`` and ``_`` mixing letters and digits
  (CSRF tokens, session and cache-busting ids that reach a page's text).

Dates in the content (an article's "updated on") are kept: they are the content. **The diff**
is a unified diff of the content as extracted (not normalised: what a reader sees), at most
:data:`MAX_DIFF_BYTES`; each side is cut to :data:`MAX_DIFF_LINES` lines first, since
``difflib`` can take time quadratic in the lines of a hostile page.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import unicodedata
from dataclasses import dataclass

#: The most bytes of a page's diff (UTF-8); a longer one is cut, and says so.
MAX_DIFF_BYTES = 64 * 1024
#: Lines of each side a diff compares at most.
MAX_DIFF_LINES = 5000
CUT = "… (the diff is cut here: at most 64 KB)"

#: What change tracking says of a page, in the order its counts show them: ``new``, ``same``
#: and ``changed`` compare a page stored with its previous version; ``removed`` is a version
#: whose page a completed collection did not find again (``storage.removed_pages``).
STATUSES = ("new", "same", "changed", "removed")
NEW, SAME, CHANGED, REMOVED = STATUSES
#: The statuses that say something changed: what ``/changes`` lists by default, what a
#: monitor that notifies of ``changes`` calls its webhook for.
CHANGES = (NEW, CHANGED, REMOVED)

_SPACE = re.compile(r"\s+")
_COPYRIGHT = re.compile(
    r"(?i)(?:©|\(c\)|copyright)\s*(?:\d{4}(?:\s*[-\u2013]\s*\d{2,4})?)(?:\s*,\s*\d{4})*")
_TOKEN = re.compile(r"\b(?=[A-Za-z0-9_-]*[0-9])(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{24,}\b")


def normalised(content: str) -> str:
    """``content`` as compared (see the module)."""
    lines = []
    for line in unicodedata.normalize("NFC", content).splitlines():
        line = _SPACE.sub(" ", line).strip()
        if not line:
            continue
        line = _COPYRIGHT.sub("©", line)
        lines.append(_TOKEN.sub("<token>", line))
    return "\n".join(lines)


def digest(content: str) -> str:
    """The fingerprint of ``content`` as compared: equal for a page that did not change."""
    return hashlib.sha256(normalised(content).encode()).hexdigest()


def unified_diff(previous: str, current: str) -> str:
    """The unified diff from ``previous`` to ``current`` (their lines), at most
    :data:`MAX_DIFF_BYTES`."""
    lines = difflib.unified_diff(previous.splitlines()[:MAX_DIFF_LINES],
                                 current.splitlines()[:MAX_DIFF_LINES],
                                 "previous", "current", lineterm="", n=2)
    out: list[str] = []
    size = 0
    budget = MAX_DIFF_BYTES - len(CUT.encode()) - 1
    for line in lines:
        size += len(line.encode()) + 1
        if size > budget:
            out.append(CUT)
            break
        out.append(line)
    return "\n".join(out)


@dataclass(frozen=True)
class Change:
    """A page's ``change`` against its previous version (None: it has none)."""

    status: str  #: :data:`NEW`, :data:`SAME` or :data:`CHANGED`
    previous_fetched_at: str | None = None
    diff: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        return {"status": self.status, "previous_fetched_at": self.previous_fetched_at,
                "diff": self.diff}


def compare(content: str, previous: tuple[str, str, str] | None) -> Change:
    """``content`` against ``previous`` (its digest, its content, when it was fetched):
    ``new`` without one, ``same`` when the digests agree, else ``changed`` with the diff."""
    if previous is None:
        return Change(NEW)
    previous_digest, previous_content, fetched_at = previous
    if digest(content) == previous_digest:
        return Change(SAME, fetched_at)
    return Change(CHANGED, fetched_at, unified_diff(previous_content, content))
