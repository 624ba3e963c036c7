"""The kinds of value a page operation's option takes, each with its one rule.

An option (:class:`core.operations.Option`) is a request field, a keyword argument of its job
and extraction function, a collection's field and a spider's ``-a``. Its :class:`Kind` checks
a JSON value (the API's 422, batch code's ``ValueError``) and reads a ``-a`` string, so every
way in accepts the same values.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.patterns import MAX_PATTERNS, pattern_errors
from core.record_schema import SchemaInvalid, parse_schema
from core.selectors import MAX_SELECTORS, selector_errors

#: What ``formats`` may ask for, in the order the answer lists them.
FORMATS = ("text", "markdown", "html", "raw_html")


class OptionError(ValueError):
    """A value an option cannot take. ``errors`` names bad entries of a list by index."""

    def __init__(self, message: str, errors: dict[int, str] | None = None):
        super().__init__(message)
        self.errors = errors or {}


@dataclass(frozen=True)
class Kind:
    """A kind of option value: ``check`` a JSON value (normalised, or :class:`OptionError`),
    ``from_text`` a ``scrapy crawl -a`` string (to a JSON value). ``minimum``/``maximum``
    bound a whole number (:func:`whole_number`), ``choices`` are a choice's values
    (:func:`choice`), ``most`` a text's or a list's length: what the OpenAPI document says."""

    name: str
    check: Callable[[Any], Any]
    from_text: Callable[[str], Any]
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()
    most: int | None = None


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise OptionError("Not a valid boolean.")
    return value


def _boolean_text(text: str) -> bool:
    return text.strip().lower() not in {"", "0", "false", "no", "off"}


def _strings(value: Any, most: int) -> list[str]:
    if not isinstance(value, list | tuple):
        raise OptionError("Not a valid list.")
    if len(value) > most:
        raise OptionError(f"At most {most} entries.")
    bad = {index: "Not a valid string." for index, entry in enumerate(value)
           if not isinstance(entry, str)}
    if bad:
        raise OptionError("Not a list of strings.", bad)
    return list(value)


def _formats(value: Any) -> list[str]:
    asked = _strings(value, len(FORMATS))
    unknown = {index: f"Unknown format {entry!r}: one of {', '.join(FORMATS)}."
               for index, entry in enumerate(asked) if entry not in FORMATS}
    if unknown:
        raise OptionError("Unknown format.", unknown)
    if not asked:
        raise OptionError(f"Ask for at least one format: {', '.join(FORMATS)}.")
    twice = {index: f"Format {entry!r} is asked for twice." for index, entry in enumerate(asked)
             if entry in asked[:index]}
    if twice:
        raise OptionError("A format asked for twice.", twice)
    return [name for name in FORMATS if name in asked]


def _expressions(errors_of: Callable[[list[str]], dict[int, str]], most: int, refusal: str
                 ) -> Callable[[Any], list[str]]:
    """The check of a list of at most ``most`` users' expressions (CSS selectors, RE2
    patterns) that ``errors_of`` judges, naming each bad one by its index."""

    def check(value: Any) -> list[str]:
        expressions = _strings(value, most)
        errors = errors_of(expressions)
        if errors:
            raise OptionError(refusal, errors)
        return expressions

    return check


def _list_text(text: str) -> list[str]:
    """A JSON list (``'["nav", "div.ad, aside"]'``), else comma-separated names."""
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            value = json.loads(stripped)
        except ValueError:
            raise OptionError("Not a valid JSON list.") from None
        return value if isinstance(value, list) else [value]
    return [part.strip() for part in stripped.split(",") if part.strip()]


def _one_or_list_text(text: str) -> list[str]:
    """A JSON list of expressions, else one expression (a selector or a regex may hold
    commas: ``nav, footer``)."""
    stripped = text.strip()
    return _list_text(stripped) if stripped.startswith("[") else [stripped] if stripped else []


def _schema(value: Any) -> Any:
    """A selector schema (:func:`core.record_schema.parse_schema`), kept as JSON: what travels
    to a worker and is stored is the client's schema, parsed again where it is applied."""
    if value is None:
        return None
    try:
        parse_schema(value)
    except SchemaInvalid as exc:
        raise OptionError(str(exc)) from None
    return value


def _schema_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        raise OptionError("Not valid JSON.") from None


def whole_number(minimum: int, maximum: int) -> Kind:
    """A JSON integer from ``minimum`` to ``maximum`` (``5.0`` is 5; ``"5"``, ``true`` and
    ``2.5`` are not numbers of it); ``-a limit=100``."""

    def check(value: Any) -> int:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise OptionError("Not a valid integer.")
        if not minimum <= value <= maximum:
            raise OptionError(f"Must be from {minimum} to {maximum}.")
        return value

    def from_text(text: str) -> Any:
        try:
            return int(text.strip())
        except ValueError:
            return text  # refused by check, in its words

    return Kind("integer", check, from_text, minimum=minimum, maximum=maximum)


def choice(*choices: str) -> Kind:
    """One of ``choices`` (a JSON string)."""

    def check(value: Any) -> str:
        if value not in choices:
            raise OptionError(f"Must be one of: {', '.join(choices)}.")
        return value

    return Kind("choice", check, str.strip, choices=choices)


def text(most: int) -> Kind:
    """A string of at most ``most`` characters, or null (an empty or blank one is null)."""

    def check(value: Any) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str):
            raise OptionError("Not a valid string.")
        if len(value) > most:
            raise OptionError(f"At most {most} characters.")
        return value if value.strip() else None

    return Kind("text", check, lambda given: given, most=most)


BOOLEAN = Kind("boolean", _boolean, _boolean_text)
#: A crawl's path rules (``include_paths``, ``exclude_paths``): at most
#: :data:`~core.patterns.MAX_PATTERNS` RE2 patterns; ``-a include_paths='["^/docs/"]'`` (a JSON
#: list) or ``-a include_paths=^/docs/`` (one pattern: a regex may hold commas).
PATH_PATTERNS = Kind("patterns", _expressions(pattern_errors, MAX_PATTERNS, "Invalid pattern."),
                     _one_or_list_text, most=MAX_PATTERNS)
FORMAT_LIST = Kind("formats", _formats, _list_text)
SELECTOR_LIST = Kind("selectors",
                     _expressions(selector_errors, MAX_SELECTORS, "Invalid selector."),
                     _one_or_list_text, most=MAX_SELECTORS)
SCHEMA = Kind("schema", _schema, _schema_text)
