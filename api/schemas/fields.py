"""The field types and bases every request and response schema is built from: URLs (no
credentials, no control characters), JSON booleans and whole numbers, text the database can
store, and the two bases (:class:`RequestSchema`, :class:`Response`)."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from marshmallow import Schema, ValidationError, fields, missing, validate
from marshmallow_dataclass import class_schema
from werkzeug.routing import UnicodeConverter

from core.controls import CONTROL_RANGES, control_character_error

#: Longest URL accepted (what common browsers and servers handle).
MAX_URL_LENGTH = 2048


#: What a :class:`Url` accepts, for the OpenAPI document: a scheme, for http(s) a host, and no
#: control character anywhere. (Other schemes pass validation and are refused by source
#: policy, 403.)
ABSOLUTE_URL_PATTERN = (rf"^(?![\s\S]*[{CONTROL_RANGES}])"
                        r"(?![Hh][Tt][Tt][Pp][Ss]?:(?!//[^/?#]))[A-Za-z][A-Za-z0-9+.-]*:")


#: What no database column of ours can hold: NUL (PostgreSQL's text refuses it) and the lone
#: surrogates U+D800 to U+DFFF (not encodable in UTF-8, so neither driver can send them). JSON can
#: carry both (``"\\u0000"``, ``"\\ud800"``); Python strings too.
UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


class StorableText(UnicodeConverter):
    """The app's default path converter: Werkzeug's ``string``, less what :data:`UNSTORABLE`
    names. A path parameter with a NUL (``/collections/col_%00``) matches no route (404)
    instead of reaching the database, where PostgreSQL refuses it with an error (a 500)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.regex = self.regex.replace("[^/]", "[^/\\x00\\ud800-\\udfff]", 1)


def printable(value: str) -> None:
    """422 for text with a control character (a name or tag shown in a terminal or a log)."""
    refused = control_character_error(value)
    if refused:
        raise ValidationError(refused)


def storable_text(value: str) -> None:
    """422 for text the database cannot store, before anything is reserved or written.

    Every string a request carries may end up in a row (the URL in the activity history, the
    body in an idempotency record): refused here, it never makes a write fail after the credits
    are reserved.
    """
    found = UNSTORABLE.search(value) if isinstance(value, str) else None
    if found:
        raise ValidationError(
            f"Contains U+{ord(found.group()):04X} at position {found.start()}, which cannot be "
            "stored: NUL characters and unpaired surrogates are not accepted.")


def _storable_strings(field_obj: fields.Field) -> None:
    """Give ``field_obj`` — and the strings inside it (lists, dicts, nested schemas get theirs
    from :class:`RequestSchema` itself) — the :func:`storable_text` validator."""
    if isinstance(field_obj, fields.String) and storable_text not in field_obj.validators:
        field_obj.validators = [*field_obj.validators, storable_text]
    for inner in (getattr(field_obj, "inner", None), getattr(field_obj, "key_field", None),
                  getattr(field_obj, "value_field", None),
                  *(getattr(field_obj, "tuple_fields", None) or ())):
        if isinstance(inner, fields.Field):
            _storable_strings(inner)


class RequestSchema(Schema):
    """Base of every request schema (bodies and query strings): each string field, whatever
    its other rules, refuses what the database cannot store (:func:`storable_text`)."""

    def on_bind_field(self, field_name: str, field_obj: fields.Field) -> None:
        _storable_strings(field_obj)


def absolute_url(value: str) -> None:
    """422 for what is not a URL at all; a URL of the wrong kind is a 403 of source policy."""
    try:
        parts = urlsplit(value.strip())
    except ValueError as exc:
        raise ValidationError(f"Not a valid URL: {exc}.") from None
    if not parts.scheme or (parts.scheme in ("http", "https") and not parts.netloc):
        raise ValidationError("Must be an absolute URL, such as https://example.com/.")
    # never fetched with, logged or stored: refused (api.factory.redact_url)
    if "@" in parts.netloc:
        raise ValidationError("Must not contain credentials (user:password@).")


def no_control_characters(rule: Callable[[str], None]) -> Callable[[str], None]:
    """``rule``, after the check every URL field makes first: a URL with a control character
    (:func:`core.controls.control_character_error`) is a 422 naming the field, whatever
    else it is, and never reaches a worker, a log or the history."""
    def check(value: str) -> None:
        refused = control_character_error(value)
        if refused:
            raise ValidationError(refused)
        rule(value)

    return check


class Url(fields.String):
    """An absolute URL (:func:`absolute_url`, or the stricter ``rule`` given) without control
    characters, checked as sent and then stripped of surrounding spaces; ``validators`` add
    rules, ``metadata`` replaces the description."""

    def __init__(self, *, validators=(), required=True, metadata=None, rule=absolute_url,
                 **kwargs):
        super().__init__(
            required=required,
            validate=[validate.Length(min=1, max=MAX_URL_LENGTH), no_control_characters(rule),
                      *validators],
            metadata={"description": "Absolute http(s) URL of the page, without credentials "
                                     "(a URL with user:password@ is refused, 422) and without "
                                     "control characters (CR, LF, ESC, DEL, NEL, U+2028…: "
                                     "refused, 422; percent-encode them, %0D%0A).",
                      "format": "uri", "pattern": ABSOLUTE_URL_PATTERN,
                      "example": "https://example.com/", **(metadata or {})},
            **kwargs,
        )

    def deserialize(self, value: Any, attr: str | None = None,
                    data: Mapping[str, Any] | None = None, **kwargs: Any) -> Any:
        # Stripped after validation: a control character that str.strip() would drop (a
        # trailing "\r\n", NEL, U+2028) is refused like any other.
        output = super().deserialize(value, attr, data, **kwargs)
        return output.strip() if isinstance(output, str) else output


class Names(fields.String):
    """Names out of ``choices``, comma-separated, repeated or both (``?status=new,changed``,
    ``?status=new&status=changed``), as a frozenset: the API's lists of what to include or
    filter. An unknown name, or none at all, is a 422 saying which are known."""

    #: webargs hands this field every value of a repeated parameter, not only the first.
    is_multiple = True

    def __init__(self, choices: Sequence[str], **kwargs: Any):
        super().__init__(**kwargs)
        self.choices = tuple(choices)

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> frozenset[str]:
        as_text = super()._deserialize
        texts = [as_text(text, attr, data, **kwargs)
                 for text in (value if isinstance(value, list) else [value])]
        names = [name.strip() for text in texts for name in text.split(",") if name.strip()]
        unknown = [name for name in names if name not in self.choices]
        if unknown or not names:
            raise ValidationError(f"Must be one of: {', '.join(self.choices)} (not "
                                  f"{', '.join(unknown) or 'nothing'}).")
        return frozenset(names)


class JsonBoolean(fields.Boolean):
    """A JSON boolean, ``true`` or ``false``: marshmallow's Boolean also reads "no", "yes",
    "1", 1 and "on", and a field of the wrong type is a 422 (docs/api.md, Basics)."""

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        return value


class WholeNumber(fields.Integer):
    """A JSON integer: ``5`` and ``5.0`` (JSON Schema's integers, what generated clients may
    send), never ``"5"``, ``true`` or ``2.5``."""

    def __init__(self, **kwargs):
        super().__init__(strict=True, **kwargs)

    def _validated(self, value):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return super()._validated(value)


class AnyOf(fields.Field):
    """A value of one of several shapes (``AnyOf(Nested(A), Nested(B))``), documented as
    ``anyOf`` them all (:func:`api.openapi.any_of`): generated clients then read each shape.
    Dumped as the first shape dumps it."""

    def __init__(self, *choices: fields.Field, **kwargs: Any):
        super().__init__(**kwargs)
        self.choices = choices

    def _bind_to_schema(self, field_name: str, parent: Schema | fields.Field) -> None:
        super()._bind_to_schema(field_name, parent)
        self.choices = tuple(copy.deepcopy(choice) for choice in self.choices)
        for choice in self.choices:
            choice._bind_to_schema(field_name, self)

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        return self.choices[0]._serialize(value, attr, obj, **kwargs)


class Response(Schema):
    """A response object: every field is always present (docs/api.md, Basics), ``null`` when
    unknown.

    Each field is marked required for the OpenAPI document (which generated clients and
    schemathesis read); dumping is unaffected.
    """

    def on_bind_field(self, field_name: str, field_obj: fields.Field) -> None:
        field_obj.required = True
        field_obj.load_default = missing  # a dataclass default is no default of the answer


def item_schema(item: type) -> type[Schema]:
    """The response schema of an item class (``core.items``): the shape is written once,
    there, with each field's description; here every field is marked required (always
    present) like any :class:`Response`."""
    return class_schema(item, base_schema=Response)
