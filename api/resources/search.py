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
from marshmallow import Schema

from api.auth import authenticated
from api.errors import ApiError
from api.openapi import AUTHENTICATED, BASE_PATH, documented
from api.operations import refuse, run_billed
from api.schemas.search import (
    NewsSearchResponseSchema,
    SearchRequestSchema,
    SearchResponseSchema,
    VideoSearchResponseSchema,
)
from api.search import ProviderError, Search, SearchQuery
from core.operations import SEARCH, SEARCH_NEWS, SEARCH_VIDEOS, Operation

#: What the error messages call each kind of search.
LABELS = {"web": "web", "news": "news", "videos": "video"}

blp = authenticated(Blueprint("search", __name__, url_prefix=BASE_PATH,
                              description="Web, news and video search through the "
                                          "deployment's search provider."))


#: What the search operations' 502 and 503 mean.
SEARCH_ERRORS = {
    502: "search_provider_error: the provider failed or refused; the message says why.",
    503: "search_not_configured: no provider for this operation on this deployment; or "
         "unavailable: the database cannot be reached.",
}


def _documented(operation_id: str, response_schema: type[Schema], operation: Operation):
    """The request schema, the 200 schema and the errors every search operation shares."""
    def decorate(view):
        view = blp.arguments(SearchRequestSchema)(view)
        return documented(blp, operation_id, response_schema,
                          (*AUTHENTICATED, 400, 402, 413, 422, 502), billed=True,
                          descriptions=SEARCH_ERRORS, operation=operation)(view)
    return decorate


def _search(operation: Operation, kind: str, args: dict[str, Any]):
    """Refuse (free) without a provider, else run the search billed its price (the table of
    operations): see api.operations."""
    search: Search = current_app.extensions["webdata.search"]
    provider = search.provider_for(kind)
    if provider is None:
        raise refuse(operation.name, ApiError(
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

    return run_billed(operation.name, operation.cost, work)


@blp.route("/search", methods=["POST"])
@_documented("searchWeb", SearchResponseSchema, SEARCH)
def search(args: dict):
    """Search the web.

    Ranked results (url, title, snippet) from the deployment's search provider, HTML removed
    and each page once. 5 credits on success, also when nothing is found; failures are free.
    """
    return _search(SEARCH, "web", args)


@blp.route("/search/news", methods=["POST"])
@_documented("searchNews", NewsSearchResponseSchema, SEARCH_NEWS)
def search_news(args: dict):
    """Search news.

    As /search, with each article's source and publication date. 5 credits on success.
    """
    return _search(SEARCH_NEWS, "news", args)


@blp.route("/search/videos", methods=["POST"])
@_documented("searchVideos", VideoSearchResponseSchema, SEARCH_VIDEOS)
def search_videos(args: dict):
    """Search videos.

    As /search, with channel, duration, thumbnail, date and — for YouTube videos when the
    deployment has a YouTube Data API key — views, likes and comments. 5 credits on success.
    """
    return _search(SEARCH_VIDEOS, "videos", args)
