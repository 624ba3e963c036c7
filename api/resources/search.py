"""``POST /search``, ``/search/news``, ``/search/videos``: the deployment's search provider,
proxied (5 credits on success, also when nothing is found).

No queue and no worker: the API process asks the provider over a pooled connection and
answers, so a search takes the provider's time plus a few milliseconds. Which provider
answers is configuration (see :mod:`api.search.registry`); an operation without one answers
503 search_not_configured, and any provider failure 502 search_provider_error — both free.
"""

from __future__ import annotations

from typing import Any

from flask import current_app
from flask_smorest import Blueprint
from marshmallow import Schema, fields, validate

from api.auth import authenticated
from api.errors import ApiError
from api.openapi import AUTHENTICATED, BASE_PATH, documented
from api.operations import refuse, run_billed
from api.schemas import EngagementSchema, RequestSchema, Response, WholeNumber
from api.search import ProviderError, Search, SearchQuery

COST = 5
MAX_QUERY_LENGTH = 400
MAX_LIMIT = 10
TWO_LETTERS = validate.Regexp(r"^[a-z]{2}\Z", error="Must be two lowercase letters.")
#: What the error messages call each kind of search.
LABELS = {"web": "web", "news": "news", "videos": "video"}

blp = authenticated(Blueprint("search", __name__, url_prefix=BASE_PATH,
                              description="Web, news and video search through the "
                                          "deployment's search provider."))


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


#: What the search operations' 502 and 503 mean.
SEARCH_ERRORS = {
    502: "search_provider_error: the provider failed or refused; the message says why.",
    503: "search_not_configured: no provider for this operation on this deployment; or "
         "unavailable: the database cannot be reached.",
}


def _documented(operation_id: str, response_schema: type[Schema]):
    """The request schema, the 200 schema and the errors every search operation shares."""
    def decorate(view):
        view = blp.arguments(SearchRequestSchema)(view)
        return documented(blp, operation_id, response_schema,
                          (*AUTHENTICATED, 400, 402, 413, 422, 502), billed=True,
                          descriptions=SEARCH_ERRORS)(view)
    return decorate


def _search(operation: str, kind: str, args: dict[str, Any]):
    """Refuse (free) without a provider, else run the search billed: see api.operations."""
    search: Search = current_app.extensions["webdata.search"]
    provider = search.provider_for(kind)
    if provider is None:
        raise refuse(operation, ApiError(
            "search_not_configured",
            f"No {LABELS[kind]} search provider is configured on this deployment.",
        ))
    query = SearchQuery(args["query"], args["limit"], args["country"], args["language"])

    def work() -> dict[str, Any]:
        try:
            results = search.search(kind, query)
        except ProviderError as exc:
            raise ApiError("search_provider_error", f"{provider.name}: {exc.reason}") from None
        return {"query": query.query, "results": results}

    return run_billed(operation, COST, work)


@blp.route("/search", methods=["POST"])
@_documented("searchWeb", SearchResponseSchema)
def search(args: dict):
    """Search the web.

    Ranked results (url, title, snippet) from the deployment's search provider, HTML removed
    and each page once. 5 credits on success, also when nothing is found; failures are free.
    """
    return _search("search", "web", args)


@blp.route("/search/news", methods=["POST"])
@_documented("searchNews", NewsSearchResponseSchema)
def search_news(args: dict):
    """Search news.

    As /search, with each article's source and publication date. 5 credits on success.
    """
    return _search("search_news", "news", args)


@blp.route("/search/videos", methods=["POST"])
@_documented("searchVideos", VideoSearchResponseSchema)
def search_videos(args: dict):
    """Search videos.

    As /search, with channel, duration, thumbnail, date and — for YouTube videos when the
    deployment has a YouTube Data API key — views, likes and comments. 5 credits on success.
    """
    return _search("search_videos", "videos", args)
