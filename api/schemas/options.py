"""The request field of a page operation's option (:class:`core.operations.Option`), made
from its kind: its values checked by the kind's one rule (:mod:`core.options`), its OpenAPI
type the kind's JSON type."""

from __future__ import annotations

from typing import Any

from marshmallow import ValidationError, fields, missing, validate

from api.schemas.fields import JsonBoolean, WholeNumber
from core.operations import Option
from core.options import FORMATS, Kind, OptionError
from core.patterns import MAX_PATTERN_LENGTH
from core.selectors import MAX_SELECTOR_LENGTH


class _Checked(fields.Field):
    """A field whose values its option's kind checks (:mod:`core.options`, one rule): a 422
    with the kind's words, naming each bad entry of a list by its index."""

    def __init__(self, kind: Kind, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.kind = kind

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> Any:
        try:
            return self.kind.check(value)
        except OptionError as exc:
            raise ValidationError(exc.errors or str(exc)) from None


class CheckedList(_Checked, fields.List):
    """A list option: a JSON array of strings."""


class CheckedSchema(_Checked, fields.Dict):
    """A selector schema: a JSON object (a 422 saying where it is bad)."""


class _TextField(_Checked, fields.String):
    """A text option: a string (blank is null) of at most its kind's length."""


def option_field(option: Option, *, defaulted: bool = True, note: str = "") -> fields.Field:
    """The request field of ``option``; with its default when ``defaulted`` (a collection's
    are not: an option its extract does not take is refused, so which were given matters).
    ``note`` goes before its description."""
    words = " ".join(filter(None, (note, option.description)))
    metadata = {"description": words} if words else {}
    default = option.default
    kind = option.kind
    if kind.name == "boolean":
        return JsonBoolean(load_default=default if defaulted else missing, metadata=metadata)
    if kind.name == "schema":
        return CheckedSchema(kind, metadata=metadata, allow_none=True,
                             load_default=default if defaulted else missing)
    if kind.name in _SCALARS:
        return _SCALARS[kind.name](kind, metadata, default if defaulted else missing)
    if kind.name == "formats":
        inner: fields.Field = fields.String(validate=validate.OneOf(FORMATS))
        size = validate.Length(min=1, max=len(FORMATS))
        metadata = {**metadata, "uniqueItems": True}
    elif kind.name == "patterns":  # RE2, the syntax their description names
        inner = fields.String(validate=validate.Length(min=1, max=MAX_PATTERN_LENGTH),
                              metadata={"format": "regex"})
        size = validate.Length(max=kind.most)
    else:  # selectors: the document names their syntax (a format), and their limits
        inner = fields.String(validate=validate.Length(min=1, max=MAX_SELECTOR_LENGTH),
                              metadata={"format": "css-selector"})
        size = validate.Length(max=kind.most)
    return CheckedList(option.kind, inner, validate=size, metadata=metadata,
                       load_default=(lambda: list(default)) if defaulted else missing)


def _whole_number(kind: Kind, metadata: dict[str, Any], default: Any) -> fields.Field:
    # Range gives the document its minimum and maximum, and the 422 its words
    return WholeNumber(validate=validate.Range(kind.minimum, kind.maximum),
                       metadata=metadata, load_default=default)


def _choice(kind: Kind, metadata: dict[str, Any], default: Any) -> fields.Field:
    return fields.String(validate=validate.OneOf(kind.choices, error=(
        f"Must be one of: {', '.join(kind.choices)}.")), metadata=metadata,
        load_default=default)


def _text(kind: Kind, metadata: dict[str, Any], default: Any) -> fields.Field:
    return _TextField(kind, metadata={**metadata, "maxLength": kind.most},
                      load_default=default, allow_none=True)


#: The field of each scalar kind but the boolean (a JSON integer, a choice, a text).
_SCALARS = {"integer": _whole_number, "choice": _choice, "text": _text}
