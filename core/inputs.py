"""The first checks of a client's expression (a crawl's pattern, a CSS selector, an XPath):
a string, not empty, not too long; and a list of them checked entry by entry. One wording for
every kind, so that each refusal reads alike."""

from __future__ import annotations

from collections.abc import Callable, Sequence


def checked_text(value: object, noun: str, most: int, error: type[ValueError], *,
                 blank_is_empty: bool = True) -> str:
    """``value`` when it is a string of 1 to ``most`` characters, else ``error`` saying which
    rule it breaks, naming it by ``noun`` (``"a selector"``). ``blank_is_empty``: only spaces
    count as empty (not for a regex, where a space is a pattern)."""
    named = noun[0].upper() + noun[1:]
    if not isinstance(value, str):
        raise error(f"{named} must be a string.")
    if not (value.strip() if blank_is_empty else value):
        raise error(f"{named} may not be empty.")
    if len(value) > most:
        raise error(f"{named} may have at most {most} characters, this one has {len(value)}.")
    return value


def errors_by_index(values: Sequence[object], check: Callable[[object], object],
                    error: type[Exception]) -> dict[int, str]:
    """Index → message for each of ``values`` that ``check`` refuses with ``error``; ``{}``
    when it takes them all."""
    errors: dict[int, str] = {}
    for index, value in enumerate(values):
        try:
            check(value)
        except error as exc:
            errors[index] = str(exc)
    return errors
