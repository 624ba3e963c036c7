"""Request and response schemas (marshmallow); they are also the OpenAPI documentation."""

from __future__ import annotations

from urllib.parse import urlsplit

from marshmallow import Schema, ValidationError, fields, validate

#: Longest URL accepted (what common browsers and servers handle).
MAX_URL_LENGTH = 2048
#: What :func:`absolute_url` accepts, for the OpenAPI document: a scheme, and for http(s) a
#: host. (Other schemes pass validation and are refused by source policy, 403.)
ABSOLUTE_URL_PATTERN = r"^(?![Hh][Tt][Tt][Pp][Ss]?:(?!//[^/?#]))[A-Za-z][A-Za-z0-9+.-]*:"


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
                      "format": "uri", "pattern": ABSOLUTE_URL_PATTERN,
                      "example": "https://example.com/"},
            **kwargs,
        )

    def _deserialize(self, value, attr, data, **kwargs):
        return super()._deserialize(value, attr, data, **kwargs).strip()


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
    """A response object: every field is always present (API.md), ``null`` when unknown.

    Each field is marked required for the OpenAPI document (which generated clients and
    schemathesis read); dumping is unaffected.
    """

    def on_bind_field(self, field_name: str, field_obj: fields.Field) -> None:
        field_obj.required = True


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
        "description": "Stable machine code (see API.md)."})
    message = fields.String(required=True)
    request_id = fields.String(required=True)
    errors = fields.Dict(required=True, metadata={
        "description": "Field-level messages (422 validation_error); {} otherwise."})
    details = fields.Nested(ErrorDetailsSchema, metadata={
        "description": "For errors that come from a target: its URL and status."})


class ScrapeRequestSchema(Schema):
    url = Url()
    include_links = fields.Boolean(load_default=True)
    include_metadata = fields.Boolean(load_default=True)


class PageResponseSchema(Response):
    """Fields every single-page operation answers with."""

    request_id = fields.String()
    credits_used = fields.Integer()
    url = fields.String(metadata={"description": "As requested."})
    final_url = fields.String(metadata={"description": "After redirects."})
    status_code = fields.Integer()
    fetched_at = fields.String(metadata={"description": "ISO 8601 UTC."})


class LinkSchema(Response):
    url = fields.String()
    text = fields.String(allow_none=True)
    rel = fields.String(allow_none=True)
    internal = fields.Boolean()


class MetadataSchema(Response):
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


class UrlRequestSchema(Schema):
    """Body of the one-URL operations without options (contacts, products, video)."""

    url = Url()


def _string(description: str | None = None, **kwargs) -> fields.String:
    """A string field that may be null (the contract's "unknown" value, never "")."""
    metadata = {"description": description} if description else {}
    return fields.String(allow_none=True, metadata=metadata, **kwargs)


class EmailSchema(Response):
    value = fields.String()
    source_url = fields.String()
    found_in = fields.String(metadata={"description": "mailto|text|json_ld|microdata|obfuscated"})


class PhoneSchema(Response):
    value = fields.String(metadata={"description": "E.164."})
    raw = fields.String(metadata={"description": "As written on the page."})
    type = _string("fixed_line, mobile, fixed_line_or_mobile, toll_free, voip, …; null unknown.")
    source_url = fields.String()
    found_in = fields.String(metadata={"description": "tel|text|json_ld|microdata"})


class SocialLinkSchema(Response):
    platform = fields.String()
    url = fields.String()
    handle = _string()
    source_url = fields.String()


class OrganizationSchema(Response):
    name = _string()
    url = _string()
    logo = _string()
    address = _string()


class ContactsResponseSchema(PageResponseSchema):
    emails = fields.List(fields.Nested(EmailSchema))
    phones = fields.List(fields.Nested(PhoneSchema))
    social_links = fields.List(fields.Nested(SocialLinkSchema))
    organization = fields.Nested(OrganizationSchema, allow_none=True)
    suggested_pages = fields.List(fields.String(), metadata={
        "description": "Same-site contact, about, imprint, team or support pages (not fetched)."})


class RatingSchema(Response):
    rating_value = fields.Float(allow_none=True)
    review_count = fields.Integer(allow_none=True)
    best_rating = fields.Float(allow_none=True)


class OfferSchema(Response):
    price = _string("Decimal string, '.' as separator, no thousands separator.")
    currency = _string("ISO 4217.")
    availability = _string("schema.org name without prefix, e.g. InStock.")
    item_condition = _string("schema.org name without prefix, e.g. NewCondition.")
    price_valid_until = _string()
    seller = _string()
    url = _string()
    sku = _string()


class ProductSchema(Response):
    source = fields.String(metadata={"description": "json_ld|microdata|rdfa|opengraph"})
    name = _string()
    description = _string()
    url = _string()
    sku = _string()
    mpn = _string()
    gtin = _string()
    brand = _string()
    category = _string()
    color = _string()
    images = fields.List(fields.String())
    aggregate_rating = fields.Nested(RatingSchema, allow_none=True)
    offers = fields.List(fields.Nested(OfferSchema))


class ProductsResponseSchema(PageResponseSchema):
    products = fields.List(fields.Nested(ProductSchema), metadata={
        "description": "At most 20 products, at most 20 offers each."})


class ChannelSchema(Response):
    id = _string()
    name = _string()
    url = _string()


class ThumbnailSchema(Response):
    url = fields.String()
    width = fields.Integer(allow_none=True)
    height = fields.Integer(allow_none=True)


class EngagementSchema(Response):
    views = fields.Integer(allow_none=True)
    likes = fields.Integer(allow_none=True)
    comments = fields.Integer(allow_none=True)


class CaptionTrackSchema(Response):
    language = _string()
    name = _string()
    auto_generated = fields.Boolean()


class CaptionsSchema(Response):
    status = fields.String(metadata={"description": "available|none|unknown"})
    tracks = fields.List(fields.Nested(CaptionTrackSchema))


class RelatedVideoSchema(Response):
    video_id = fields.String()
    url = fields.String()
    title = _string()
    channel = _string()
    duration_seconds = fields.Integer(allow_none=True)


class VideoResponseSchema(Response):
    request_id = fields.String()
    credits_used = fields.Integer()
    video_id = fields.String()
    url = fields.String(metadata={"description": "Canonical watch URL."})
    title = _string()
    description = _string()
    published_at = _string()
    duration_seconds = fields.Integer(allow_none=True)
    channel = fields.Nested(ChannelSchema)
    thumbnails = fields.List(fields.Nested(ThumbnailSchema))
    tags = fields.List(fields.String())
    category = _string()
    is_live = fields.Boolean(allow_none=True)
    is_family_safe = fields.Boolean(allow_none=True)
    embeddable = fields.Boolean(allow_none=True)
    engagement = fields.Nested(EngagementSchema)
    captions = fields.Nested(CaptionsSchema)
    related_videos = fields.List(fields.Nested(RelatedVideoSchema))
    source = fields.String(metadata={"description": "data_api|page"})


class PlanSchema(Response):
    name = fields.String()
    requests_per_minute = fields.Integer()
    max_batch_urls = fields.Integer()
    max_crawl_pages = fields.Integer()
    max_running_collections = fields.Integer()


class CreditsSchema(Response):
    balance = fields.Integer()


class AccountSchema(Response):
    id = fields.String()
    name = fields.String()
    plan = fields.Nested(PlanSchema)
    credits = fields.Nested(CreditsSchema)


class ActivityQuerySchema(Schema):
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
    status = fields.String()
    redis = fields.String()
    database = fields.String()
