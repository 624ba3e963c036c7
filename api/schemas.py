"""Request and response schemas (marshmallow); they are also the OpenAPI documentation."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from marshmallow import Schema, ValidationError, fields, missing, validate
from marshmallow_dataclass import class_schema
from werkzeug.routing import UnicodeConverter

from core.controls import CONTROL_RANGES, control_character_error
from core.items.video import Engagement
from core.operations import Extraction, Operation

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
    if "@" in parts.netloc:  # never fetched with, logged or stored: refused (api.redact_url)
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


class Response(Schema):
    """A response object: every field is always present (docs/api.md, Basics), ``null`` when
    unknown.

    Each field is marked required for the OpenAPI document (which generated clients and
    schemathesis read); dumping is unaffected.
    """

    def on_bind_field(self, field_name: str, field_obj: fields.Field) -> None:
        field_obj.required = True
        field_obj.load_default = missing  # a dataclass default is no default of the answer


class ErrorDetailsSchema(Response):
    url = fields.String(allow_none=True, metadata={"description": "The URL that failed."})
    target_status = fields.Integer(allow_none=True, metadata={
        "description": "The target's HTTP status, when it answered."})


class ErrorSchema(Schema):
    """The one error shape of every layer (see api.errors); ``details`` only for errors that
    come from a target."""

    code = fields.Integer(required=True, metadata={"description": "The HTTP status."})
    status = fields.String(required=True, metadata={"description": "The HTTP status phrase."})
    error = fields.String(required=True, metadata={
        "description": "Stable machine code (see docs/api.md, Errors)."})
    message = fields.String(required=True)
    request_id = fields.String(required=True)
    errors = fields.Dict(required=True, metadata={
        "description": "Field-level messages (422 validation_error); {} otherwise."})
    details = fields.Nested(ErrorDetailsSchema, metadata={
        "description": "For errors that come from a target: its URL and status."})


def item_schema(item: type) -> type[Schema]:
    """The response schema of an item class (``core.items``): the shape is written once,
    there, with each field's description; here every field is marked required (always
    present) like any :class:`Response`."""
    return class_schema(item, base_schema=Response)


class BilledResponseSchema(Response):
    """Fields every billed operation answers with."""

    request_id = fields.String()
    credits_used = fields.Integer()


class PageResponseSchema(BilledResponseSchema):
    """Fields every single-page operation answers with (the page result's)."""

    url = fields.String(metadata={"description": "As requested."})
    final_url = fields.String(metadata={"description": "After redirects."})
    status_code = fields.Integer()
    fetched_at = fields.String(metadata={"description": "ISO 8601 UTC."})


@functools.cache
def page_response_schema(page: Operation) -> type[Schema]:
    """The answer of page operation ``page``: its envelope's fields first (a billed answer's,
    and the page result's when ``common_fields``), then its item's (marshmallow orders the
    fields of the last base first); ``<title>ResponseSchema``, for the OpenAPI document."""
    assert page.extraction is not None
    envelope = PageResponseSchema if page.common_fields else BilledResponseSchema
    return type(f"{page.extraction.title}ResponseSchema",
                (item_schema(page.extraction.item), envelope), {"__module__": __name__})


EngagementSchema = item_schema(Engagement)


class UrlRequestSchema(RequestSchema):
    """Body of the one-URL operations without options (contacts, products, video)."""

    url = Url()


@functools.cache
def page_request_schema(extraction: Extraction) -> type[Schema]:
    """The body of a page operation: its URL, and its options as JSON booleans (with their
    defaults); the shared :class:`UrlRequestSchema` for one without options."""
    if not extraction.options:
        return UrlRequestSchema
    fields_ = {"url": Url(), **{option.name: JsonBoolean(load_default=option.default)
                               for option in extraction.options}}
    return type(f"{extraction.title}RequestSchema", (RequestSchema,),
                {**fields_, "__module__": __name__})


class PlanSchema(Response):
    name = fields.String()
    requests_per_minute = fields.Integer()
    max_batch_urls = fields.Integer()
    max_crawl_pages = fields.Integer()
    max_running_collections = fields.Integer()
    max_concurrent_requests = fields.Integer(metadata={
        "description": "Single-page requests (scrape, contacts, products, video-platform) the "
                       "account may have in flight at once; more are refused at once, 429 "
                       "rate_limited."})


class CreditsSchema(Response):
    balance = fields.Integer()


class AccountSchema(Response):
    id = fields.String()
    name = fields.String()
    plan = fields.Nested(PlanSchema)
    credits = fields.Nested(CreditsSchema)


class WebhookSecretSchema(Response):
    secret = fields.String(metadata={
        "description": "The new signing secret (`whsec_` + base64 of the key), shown only "
                       "now: webhooks are signed with it from now on."})
    previous_secret_expires_at = fields.String(allow_none=True, metadata={
        "description": "Until then the secret before this one signs too (a second `v1,` "
                       "signature), so receivers can switch without missing a delivery; "
                       "null when there was none to keep."})


class ActivityQuerySchema(RequestSchema):
    cursor = fields.String(load_default=None)
    limit = fields.Integer(load_default=50, validate=validate.Range(min=1, max=100))


class ActivitySchema(Response):
    id = fields.String()
    at = fields.String()
    operation = fields.String()
    credits = fields.Integer()
    status = fields.String()
    request_id = fields.String(allow_none=True)
    collection_id = fields.String(allow_none=True)
    url = fields.String(allow_none=True)


class ActivityPageSchema(Response):
    activity = fields.List(fields.Nested(ActivitySchema))
    next_cursor = fields.String(allow_none=True)


class HealthSchema(Response):
    status = fields.String(metadata={"enum": ["ok", "starting", "degraded"]})
    redis = fields.String(metadata={"enum": ["ok", "down"]})
    database = fields.String(metadata={"enum": ["ok", "down"]})
    workers = fields.Dict(keys=fields.String(), values=fields.Integer(), allow_none=True,
                          metadata={"description": "Live workers listening on each queue "
                                                   "(`interactive`, `collections`, "
                                                   "`maintenance`); null when Redis is down."})
    cron = fields.Integer(allow_none=True, metadata={
        "description": "RQ cron schedulers (the housekeeping) with a recent heartbeat; null "
                       "when Redis is down."})
