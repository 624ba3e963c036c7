"""Request and response schemas (marshmallow); they are also the OpenAPI documentation."""

from __future__ import annotations

from urllib.parse import urlsplit

from marshmallow import Schema, ValidationError, fields, validate

#: Longest URL accepted (what common browsers and servers handle).
MAX_URL_LENGTH = 2048


def absolute_url(value: str) -> None:
    """422 for what is not a URL at all; a URL of the wrong kind is a 403 of source policy."""
    try:
        parts = urlsplit(value.strip())
    except ValueError as exc:
        raise ValidationError(f"Not a valid URL: {exc}.") from None
    if not parts.scheme or (parts.scheme in ("http", "https") and not parts.netloc):
        raise ValidationError("Must be an absolute URL, such as https://example.com/.")


class Url(fields.String):
    def __init__(self, **kwargs):
        super().__init__(
            required=True,
            validate=[validate.Length(min=1, max=MAX_URL_LENGTH), absolute_url],
            metadata={"description": "Absolute http(s) URL of the page.",
                      "example": "https://example.com/"},
            **kwargs,
        )

    def _deserialize(self, value, attr, data, **kwargs):
        return super()._deserialize(value, attr, data, **kwargs).strip()


class ErrorSchema(Schema):
    code = fields.Integer(metadata={"description": "The HTTP status."})
    status = fields.String(metadata={"description": "The HTTP status phrase."})
    error = fields.String(metadata={"description": "Stable machine code (see API.md)."})
    message = fields.String()
    request_id = fields.String()
    errors = fields.Dict(metadata={"description": "Field-level messages (422 only)."})
    details = fields.Dict(metadata={"description": "For target errors: url, target_status."})


class ScrapeRequestSchema(Schema):
    url = Url()
    include_links = fields.Boolean(load_default=True)
    include_metadata = fields.Boolean(load_default=True)


class PageResponseSchema(Schema):
    """Fields every single-page operation answers with."""

    request_id = fields.String()
    credits_used = fields.Integer()
    url = fields.String(metadata={"description": "As requested."})
    final_url = fields.String(metadata={"description": "After redirects."})
    status_code = fields.Integer()
    fetched_at = fields.String(metadata={"description": "ISO 8601 UTC."})


class LinkSchema(Schema):
    url = fields.String()
    text = fields.String(allow_none=True)
    rel = fields.String(allow_none=True)
    internal = fields.Boolean()


class MetadataSchema(Schema):
    description = fields.String(allow_none=True)
    canonical_url = fields.String(allow_none=True)
    author = fields.String(allow_none=True)
    published_at = fields.String(allow_none=True)
    modified_at = fields.String(allow_none=True)
    site_name = fields.String(allow_none=True)
    image = fields.String(allow_none=True)
    keywords = fields.List(fields.String())
    open_graph = fields.Dict()
    twitter = fields.Dict()
    json_ld = fields.List(fields.Raw())
    microdata = fields.List(fields.Raw())
    meta = fields.Dict()


class ScrapeResponseSchema(PageResponseSchema):
    title = fields.String(allow_none=True)
    text = fields.String(allow_none=True, metadata={
        "description": "Readable main text; paragraphs separated by blank lines."})
    language = fields.String(allow_none=True)
    links = fields.List(fields.Nested(LinkSchema))
    metadata = fields.Nested(MetadataSchema, allow_none=True)


class PlanSchema(Schema):
    name = fields.String()
    requests_per_minute = fields.Integer()
    max_batch_urls = fields.Integer()
    max_crawl_pages = fields.Integer()
    max_running_collections = fields.Integer()


class CreditsSchema(Schema):
    balance = fields.Integer()


class AccountSchema(Schema):
    id = fields.String()
    name = fields.String()
    plan = fields.Nested(PlanSchema)
    credits = fields.Nested(CreditsSchema)


class ActivityQuerySchema(Schema):
    cursor = fields.String(load_default=None)
    limit = fields.Integer(load_default=50, validate=validate.Range(min=1, max=100))


class ActivitySchema(Schema):
    id = fields.String()
    at = fields.String()
    operation = fields.String()
    credits = fields.Integer()
    status = fields.String()
    request_id = fields.String(allow_none=True)
    collection_id = fields.String(allow_none=True)
    url = fields.String(allow_none=True)


class ActivityPageSchema(Schema):
    activity = fields.List(fields.Nested(ActivitySchema))
    next_cursor = fields.String(allow_none=True)


class HealthSchema(Schema):
    status = fields.String()
    redis = fields.String()
    database = fields.String()
