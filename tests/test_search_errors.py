"""Every way a provider fails, end to end: 502 search_provider_error with the provider's reason,
0 credits, a failed line of history. The fakes fail as their providers do (tests/fakes)."""

from __future__ import annotations

import pytest

from launcher.embedded import free_port
from tests.support.fakes.search_providers import BAD_KEY
from tests.test_search import OPERATIONS, PATHS, assert_error

pytest_plugins = ["tests.support.fakes.fixtures"]


@pytest.mark.parametrize(("provider", "kind", "query", "settings", "reason"), [
    ("searxng", "web", "fake:error", {}, "searxng: HTTP 500: search error"),
    ("searxng", "news", "fake:forbidden", {}, "searxng: HTTP 403: Forbidden"),
    ("searxng", "videos", "fake:malformed", {},
     "searxng: the answer is not valid JSON (application/json; charset=utf-8)"),
    ("searxng", "web", "fake:html", {},
     "searxng: the answer is not valid JSON (text/html; charset=utf-8)"),
    ("brave", "web", "tides", {"brave_api_key": BAD_KEY},
     "brave: HTTP 422: The provided subscription token is invalid. "
     "(SUBSCRIPTION_TOKEN_INVALID)"),
    ("brave", "news", "fake:quota", {},
     "brave: HTTP 429: Request quota limit exceeded for plan. (QUOTA_LIMITED)"),
    ("brave", "videos", "fake:rate", {},  # the "errors" list variant
     "brave: HTTP 429: Request rate limit exceeded for plan. (RATE_LIMITED)"),
    ("brave", "web", "fake:error", {}, "brave: HTTP 500: An internal error occurred."),
    ("brave", "news", "fake:malformed", {}, "brave: the answer is not valid JSON"),
    ("google", "web", "tides", {"google_cse_key": BAD_KEY},
     "google: HTTP 400: API key not valid. Please pass a valid API key. "
     "(badRequest, API_KEY_INVALID)"),
    ("google", "web", "fake:quota", {},
     "google: HTTP 429: Quota exceeded for quota metric 'Queries' and limit 'Queries per day'. "
     "(rateLimitExceeded)"),
    ("google", "web", "fake:html", {}, "google: the answer is not valid JSON (text/html"),
    ("youtube", "videos", "tides", {"youtube_api_key": BAD_KEY},
     "youtube: HTTP 400: API key not valid. Please pass a valid API key."),
    ("youtube", "videos", "fake:quota", {},
     "youtube: HTTP 403: The request cannot be completed because you have exceeded your "
     "quota. (quotaExceeded)"),
    ("youtube", "videos", "fake:error", {}, "youtube: HTTP 500: Backend Error (backendError)"),
    ("youtube", "videos", "fake:malformed", {}, "youtube: the answer is not valid JSON"),
])
def test_provider_failures_are_502_with_the_reason_and_free(
        searcher, provider, kind, query, settings, reason):
    customer = searcher(provider, **settings)
    response = customer.post(PATHS[kind], {"query": query})
    body = assert_error(response, 502, "search_provider_error")
    assert body["message"].startswith(reason), body["message"]
    assert BAD_KEY not in body["message"]
    assert body["errors"] == {}
    assert customer.balance() == 100
    latest = customer.activity()[0]
    assert (latest["operation"], latest["credits"], latest["status"]) == (
        OPERATIONS[kind], 0, "failed")
    assert latest["request_id"] == body["request_id"]


@pytest.mark.parametrize("provider", ["searxng", "brave", "google", "youtube"])
def test_a_provider_slower_than_the_timeout_is_a_502(searcher, provider):
    customer = searcher(provider, search_timeout=1.0)
    path = "/search/videos" if provider == "youtube" else "/search"
    body = assert_error(customer.post(path, {"query": "fake:slow"}), 502,
                        "search_provider_error")
    assert body["message"] == f"{provider}: no answer within 1 s"
    assert customer.balance() == 100


def test_an_unreachable_provider_is_a_502(searcher):
    customer = searcher(searxng_url=f"http://127.0.0.1:{free_port()}")
    body = assert_error(customer.post("/search/news", {"query": "tides"}), 502,
                        "search_provider_error")
    assert body["message"] == "searxng: could not connect"
    assert customer.balance() == 100
    assert customer.activity()[0]["status"] == "failed"


def test_a_failed_search_does_not_stop_the_next_one(searcher):
    customer = searcher("brave")
    assert customer.post("/search", {"query": "fake:malformed"}).status_code == 502
    assert customer.post("/search", {"query": "tides"}).status_code == 200
    assert customer.balance() == 95
