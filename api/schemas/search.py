"""``/search``, ``/search/news``, ``/search/videos``: the query, and the results of each kind."""

from __future__ import annotations

from marshmallow import fields, validate

from api.schemas.fields import RequestSchema, Response, WholeNumber, item_schema
from core.items.video import Engagement

MAX_QUERY_LENGTH = 400
MAX_LIMIT = 10
TWO_LETTERS = validate.Regexp(r"^[a-z]{2}\Z", error="Must be two lowercase letters.")

EngagementSchema = item_schema(Engagement)


class Query(fields.String):
    """The search text, stripped: a blank query is refused rather than sent to the provider."""

    def __init__(self, **kwargs):
        super().__init__(
            required=True, validate=validate.Length(min=1, max=MAX_QUERY_LENGTH),
            metadata={"description": "1 to 400 characters, not all spaces. Double-quoted "
                                     "phrases and site:domain are passed to the provider.",
                      "pattern": r"\S", "example": '"tide tables" site:example.org'},
            **kwargs,
        )

    def _deserialize(self, value, attr, data, **kwargs):
        return super()._deserialize(value, attr, data, **kwargs).strip()


class SearchRequestSchema(RequestSchema):
    query = Query()
    limit = WholeNumber(load_default=MAX_LIMIT,
                           validate=validate.Range(min=1, max=MAX_LIMIT),
                           metadata={"description": "Most results returned, 1 to 10."})
    country = fields.String(load_default=None, allow_none=True, validate=TWO_LETTERS,
                            metadata={"description": "ISO 3166-1 alpha-2, lowercase.",
                                      "example": "us"})
    language = fields.String(load_default=None, allow_none=True, validate=TWO_LETTERS,
                             metadata={"description": "ISO 639-1, lowercase.", "example": "en"})


class WebResultSchema(Response):
    position = fields.Integer(metadata={"description": "Rank, from 1."})
    url = fields.String()
    title = fields.String(allow_none=True)
    snippet = fields.String(allow_none=True, metadata={"description": "Plain text."})


class NewsResultSchema(WebResultSchema):
    source = fields.String(allow_none=True, metadata={
        "description": "The publisher as the provider names it, else the URL's host."})
    published_at = fields.String(allow_none=True, metadata={
        "description": "ISO 8601 (UTC time, or a date alone) when the provider's date can be "
                       "read, else the provider's text (\"2 hours ago\")."})


class VideoResultSchema(WebResultSchema):
    channel = fields.String(allow_none=True)
    duration_seconds = fields.Integer(allow_none=True)
    thumbnail = fields.String(allow_none=True)
    published_at = fields.String(allow_none=True)
    engagement = fields.Nested(EngagementSchema, allow_none=True, metadata={
        "description": "YouTube videos only, when the deployment has a YouTube Data API key; "
                       "else null."})


class SearchResponseSchema(Response):
    request_id = fields.String()
    credits_used = fields.Integer()
    query = fields.String(metadata={"description": "As searched (stripped)."})
    results = fields.List(fields.Nested(WebResultSchema))


class NewsSearchResponseSchema(SearchResponseSchema):
    results = fields.List(fields.Nested(NewsResultSchema))


class VideoSearchResponseSchema(SearchResponseSchema):
    results = fields.List(fields.Nested(VideoResultSchema))
