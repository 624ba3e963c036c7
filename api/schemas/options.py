"""The request field of a page operation's option (:class:`core.operations.Option`), made
from its kind: its values checked by the kind's one rule (:mod:`core.options`), its OpenAPI
type the kind's JSON type."""

from __future__ import annotations

from typing import Any

from marshmallow import ValidationError, fields, missing, validate

from api.schemas.fields import JsonBoolean
from core.operations import Option
from core.options import BOOLEAN, FORMAT_LIST, FORMATS, SCHEMA, Kind, OptionError
from core.selectors import MAX_SELECTOR_LENGTH, MAX_SELECTORS


class CheckedList(fields.List):
    """A list option: a JSON array of strings, checked by its kind (a 422 naming each bad
    entry by its index)."""

    def __init__(self, kind: Kind, inner: fields.Field, **kwargs: Any):
        super().__init__(inner, **kwargs)
        self.kind = kind

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> list[str]:
        try:
            return self.kind.check(value)
        except OptionError as exc:
            raise ValidationError(exc.errors or str(exc)) from None


class CheckedSchema(fields.Dict):
    """A selector schema: a JSON object checked by its kind (a 422 saying where it is bad)."""

    def __init__(self, kind: Kind, **kwargs: Any):
        super().__init__(**kwargs)
        self.kind = kind

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> Any:
        try:
            return self.kind.check(value)
        except OptionError as exc:
            raise ValidationError(str(exc)) from None


def option_field(option: Option, *, defaulted: bool = True, note: str = "") -> fields.Field:
    """The request field of ``option``; with its default when ``defaulted`` (a collection's
    are not: an option its extract does not take is refused, so which were given matters).
    ``note`` goes before its description."""
    words = " ".join(filter(None, (note, option.description)))
    metadata = {"description": words} if words else {}
    default = option.default
    if option.kind is BOOLEAN:
        return JsonBoolean(load_default=default if defaulted else missing, metadata=metadata)
    if option.kind is SCHEMA:
        return CheckedSchema(option.kind, metadata=metadata, allow_none=True,
                             load_default=default if defaulted else missing)
    if option.kind is FORMAT_LIST:
        inner: fields.Field = fields.String(validate=validate.OneOf(FORMATS))
        size = validate.Length(min=1, max=len(FORMATS))
        metadata = {**metadata, "uniqueItems": True}
    else:  # selectors: the document names their syntax (a format), and their limits
        inner = fields.String(validate=validate.Length(min=1, max=MAX_SELECTOR_LENGTH),
                              metadata={"format": "css-selector"})
        size = validate.Length(max=MAX_SELECTORS)
    return CheckedList(option.kind, inner, validate=size, metadata=metadata,
                       load_default=(lambda: list(default)) if defaulted else missing)
