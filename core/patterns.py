"""Users' regular expressions (a crawl's ``include_paths``/``exclude_paths``), compiled by RE2.

Python's ``re`` backtracks: ``(a+)+$`` searched in ``/aaaa…a!`` takes time doubling with
each ``a``, inside one C call that holds the GIL, which neither a slice's time budget nor a
job's death penalty can interrupt (a few such links froze every crawler worker). RE2
(``google-re2``) matches in time linear in the text, and in memory bounded by
:data:`MAX_MEMORY`; it refuses what only backtracking can do (backreferences, lookarounds,
possessive and atomic repeats). :func:`compile_pattern` is the one place a user's pattern is
compiled: validation (:func:`pattern_errors`, the API's 422) and matching
(:class:`core.scope.CrawlScope`) use the same engine, so what was accepted runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import re2

from core.inputs import checked_text, errors_by_index

#: Characters in one include/exclude pattern: they are meant for path prefixes and query
#: markers, not programs.
MAX_PATTERN_LENGTH = 500
#: Patterns in each of ``include_paths`` and ``exclude_paths``.
MAX_PATTERNS = 50
#: Bytes RE2 may use for one pattern (its program and its DFA cache; RE2's default is 8 MiB).
#: A pattern whose program alone would not fit is refused; a search that fills the cache goes
#: on in RE2's slower automaton, still linear. A crawl's 100 patterns hold about 100 MiB at most.
MAX_MEMORY = 1 << 20
#: The syntax accepted, in words a refusal can point to.
SYNTAX = "https://github.com/google/re2/wiki/Syntax"

#: A compiled pattern (``re2`` has no public name for its class).
Pattern = Any


class PatternError(ValueError):
    """A user's pattern that cannot be used; the message says why, in words."""


def _options() -> re2.Options:
    options = re2.Options()
    options.max_mem = MAX_MEMORY
    options.log_errors = False  # a user's typo is their 422, not a line on our stderr
    return options


_OPTIONS = _options()


def compile_pattern(pattern: object) -> Pattern:
    """``pattern`` compiled by RE2 with :data:`MAX_MEMORY`, or :class:`PatternError`.

    A pattern must be a string of 1 to :data:`MAX_PATTERN_LENGTH` characters in RE2's syntax
    (:data:`SYNTAX`). ``re2.compile`` keeps the last 128 compiled: a crawl's slices, which each
    build their scope again, compile a pattern once.
    """
    pattern = checked_text(pattern, "a pattern", MAX_PATTERN_LENGTH, PatternError,
                           blank_is_empty=False)
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as exc:
        raise PatternError(_refusal(exc)) from None
    except UnicodeEncodeError:  # a lone surrogate (JSON's "\ud800"): no UTF-8 for RE2
        raise PatternError("Not a valid regular expression: it holds a lone surrogate "
                           "character.") from None


def _refusal(exc: Exception) -> str:
    """RE2's reason (bytes, from its C++), in a sentence that says what is accepted."""
    reason = exc.args[0] if exc.args else ""
    if isinstance(reason, bytes):
        reason = reason.decode("utf-8", "replace")
    if reason.startswith("pattern too large"):
        return (f"Too large a regular expression: RE2 would need more than "
                f"{MAX_MEMORY >> 20} MiB to run it; use fewer or smaller repetitions.")
    hint = r" (RE2 writes the end of the text \z)" if reason.endswith(r"\Z") else ""
    return (f"Not a valid regular expression: {reason}{hint}. RE2 syntax is accepted "
            f"({SYNTAX}): it matches in linear time, so backreferences, lookarounds and "
            "possessive or atomic repeats are not.")


def pattern_errors(patterns: Sequence[object]) -> dict[int, str]:
    """Index → message in words for each pattern that cannot be used; ``{}`` when all can
    (:func:`compile_pattern`'s rules). The API (a 422 naming each index), the console's form,
    ``scrapy crawl site`` and batch code all ask this before a crawl starts."""
    return errors_by_index(patterns, compile_pattern, PatternError)


def compile_patterns(patterns: Sequence[object], name: str) -> tuple[Pattern, ...]:
    """Every pattern compiled; a ``ValueError`` naming ``name`` and each bad index else."""
    errors = pattern_errors(patterns)
    if errors:
        raise ValueError(f"{name}: " + "; ".join(f"[{i}] {m}" for i, m in errors.items()))
    return tuple(compile_pattern(pattern) for pattern in patterns)


def search_any(patterns: Iterable[Pattern], text: str) -> bool:
    """Whether one of ``patterns`` is found in ``text``. The text is encoded once for them all
    (RE2 matches UTF-8); a lone surrogate a strange link kept is encoded as is (it matches no
    character class) instead of raising."""
    data = text.encode("utf-8", "surrogatepass")
    return any(pattern.search(data) is not None for pattern in patterns)
