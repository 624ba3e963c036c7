"""POST /search, /search/news, /search/videos end to end: billing, history, validation,
configuration. The API proxies local fakes of the providers (tests/fakes)."""

from __future__ import annotations

import pytest

from api import create_app
from core.config import Config, SearchConfig, VideoConfig
from tests.conftest import make_config

pytest_plugins = ["tests.support.fakes.fixtures"]

PATHS = {"web": "/search", "news": "/search/news", "videos": "/search/videos"}
OPERATIONS = {"web": "search", "news": "search_news", "videos": "search_videos"}


def assert_error(response, status: int, error: str) -> dict:
    body = response.get_json()
    assert response.status_code == status, body
    assert body["code"] == status
    assert body["error"] == error
    assert body["request_id"] == response.headers["X-Request-Id"]
    assert "X-Credits-Used" not in response.headers
    return body


def served_by(fakes, call) -> list[str]:
    """The fakes that received a request while ``call()`` ran."""
    before = {name: len(fake.received) for name, fake in fakes.items()}
    call()
    return [name for name, fake in fakes.items() if len(fake.received) > before[name]]


def test_web_search_costs_5_credits_and_is_in_the_history(searcher):
    customer = searcher("searxng")
    response = customer.post("/search", {"query": '  "async traits" site:github.com ',
                                         "limit": 3})
    body = response.get_json()
    assert response.status_code == 200, body
    assert list(body) == ["request_id", "credits_used", "query", "results"]
    assert body["request_id"] == response.headers["X-Request-Id"]
    assert body["credits_used"] == 5
    assert body["query"] == '"async traits" site:github.com'
    assert body["results"] == [
        {"position": 1, "url": "https://github.com/rust-lang/async-traits",
         "title": "Async traits & you", "snippet": "Why async traits took years to land."},
        # the same page under http://www.…/#readme is gone
        {"position": 2, "url": "https://blog.example.org/async?page=2", "title": "Async, page 2",
         "snippet": "Second page of the series."},
        {"position": 3, "url": "https://blog.example.org/async?page=3", "title": "Async, page 3",
         "snippet": "Third page of the series."},
    ]
    assert response.headers["X-Credits-Used"] == "5"
    assert response.headers["X-Credits-Remaining"] == "95"
    assert customer.balance() == 95
    latest = customer.activity()[0]
    assert {k: latest[k] for k in ("operation", "credits", "status", "request_id", "url")} == {
        "operation": "search", "credits": 5, "status": "succeeded",
        "request_id": body["request_id"], "url": None}


def test_default_limit_is_10_and_positions_count_from_1(searcher):
    results = searcher("searxng").post("/search", {"query": "tides"}).get_json()["results"]
    assert [r["position"] for r in results] == list(range(1, 11))
    assert len({r["url"] for r in results}) == 10


@pytest.mark.parametrize(("provider", "kind"), [
    ("searxng", "web"), ("searxng", "news"), ("searxng", "videos"), ("brave", "web"),
    ("brave", "news"), ("brave", "videos"), ("google", "web"), ("youtube", "videos"),
])
def test_no_results_is_a_success_that_costs_5(searcher, provider, kind):
    customer = searcher(provider)
    response = customer.post(PATHS[kind], {"query": "fake:empty"})
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["results"] == []
    assert response.headers["X-Credits-Used"] == "5"
    assert customer.balance() == 95
    assert customer.activity()[0]["operation"] == OPERATIONS[kind]


def test_no_provider_is_503_and_free(searcher, fakes):
    customer = searcher()
    for path in PATHS.values():
        assert served_by(fakes, lambda p=path: assert_error(
            customer.post(p, {"query": "tides"}), 503, "search_not_configured")) == []
    assert customer.balance() == 100
    history = customer.activity()[:3]
    assert [(a["operation"], a["credits"], a["status"]) for a in history] == [
        ("search_videos", 0, "failed"), ("search_news", 0, "failed"), ("search", 0, "failed")]


def test_google_alone_answers_web_search_only(searcher):
    customer = searcher("google")
    assert customer.post("/search", {"query": "tides"}).status_code == 200
    news = assert_error(customer.post("/search/news", {"query": "tides"}), 503,
                        "search_not_configured")
    assert news["message"] == "No news search provider is configured on this deployment."
    assert_error(customer.post("/search/videos", {"query": "tides"}), 503,
                 "search_not_configured")
    assert customer.balance() == 95


def test_youtube_alone_answers_video_search_only(searcher):
    customer = searcher("youtube")
    assert customer.post("/search/videos", {"query": "tides"}).status_code == 200
    assert_error(customer.post("/search", {"query": "tides"}), 503, "search_not_configured")
    assert_error(customer.post("/search/news", {"query": "tides"}), 503, "search_not_configured")


@pytest.mark.parametrize(("body", "field"), [
    ({}, "query"),
    ({"query": ""}, "query"),
    ({"query": "   "}, "query"),
    ({"query": "x" * 401}, "query"),
    ({"query": 42}, "query"),
    ({"query": "tides", "limit": 0}, "limit"),
    ({"query": "tides", "limit": 11}, "limit"),
    ({"query": "tides", "limit": "5"}, "limit"),
    ({"query": "tides", "limit": 2.5}, "limit"),
    ({"query": "tides", "country": "US"}, "country"),
    ({"query": "tides", "country": "usa"}, "country"),
    ({"query": "tides", "country": "u1"}, "country"),
    ({"query": "tides", "language": "eng"}, "language"),
    ({"query": "tides", "language": "EN"}, "language"),
    ({"query": "tides", "page": 2}, "page"),
])
def test_invalid_bodies_are_422_with_field_errors_and_free(searcher, fakes, body, field):
    customer = searcher("searxng")

    def post_everywhere() -> None:
        for kind, path in PATHS.items():
            error = assert_error(customer.post(path, body), 422, "validation_error")
            assert field in error["errors"], error
            assert customer.activity()[0]["operation"] == OPERATIONS[kind]

    assert served_by(fakes, post_everywhere) == []
    assert customer.balance() == 100
    assert all(a["status"] == "failed" and a["credits"] == 0 for a in customer.activity()[:3])


def test_limits_of_the_valid_range_are_accepted(searcher, fakes):
    customer = searcher("searxng")
    body = {"query": "q" * 400, "limit": 1, "country": None, "language": None}
    response = customer.post("/search", body)
    assert response.status_code == 200, response.get_json()
    assert len(response.get_json()["results"]) == 1
    assert fakes["searxng"].last().params["q"] == "q" * 400
    assert "language" not in fakes["searxng"].last().params


def test_body_that_is_not_a_json_object_is_400(searcher):
    customer = searcher("searxng")
    assert_error(customer.post("/search", ["tides"]), 400, "bad_request")
    response = customer.client.post("/api/service/v1/search/news", data="query=tides",
                                    headers=customer.headers)
    assert_error(response, 400, "bad_request")


def test_balance_below_5_is_402_and_the_provider_is_not_asked(searcher, fakes):
    customer = searcher("brave", credits=4)
    assert served_by(fakes, lambda: assert_error(
        customer.post("/search", {"query": "tides"}), 402, "insufficient_credits")) == []
    assert customer.balance() == 4
    latest = customer.activity()[0]
    assert (latest["operation"], latest["credits"], latest["status"]) == ("search", 0, "failed")


def test_missing_key_is_401(searcher):
    app = searcher("searxng").app
    response = app.test_client().post("/api/service/v1/search", json={"query": "tides"})
    assert_error(response, 401, "unauthorized")


# --- which provider answers -------------------------------------------------------------------

def test_first_configured_provider_answers_by_default(searcher, fakes):
    customer = searcher("youtube", "google", "brave", "searxng")
    for path in PATHS.values():
        # videos: YouTube is asked too, for the engagement of the YouTube results
        assert served_by(fakes, lambda p=path: customer.post(p, {"query": "tides"})) == [
            "searxng"] + (["youtube"] if path == "/search/videos" else [])


def test_search_provider_answers_every_operation_it_supports(searcher, fakes):
    customer = searcher("searxng", "brave", search_provider="brave")
    for path in PATHS.values():
        assert served_by(fakes, lambda p=path: customer.post(p, {"query": "tides"})) == ["brave"]


def test_operations_search_provider_cannot_answer_fall_back_to_the_first_that_can(
        searcher, fakes):
    customer = searcher("brave", "google", search_provider="google")
    assert served_by(fakes, lambda: customer.post("/search", {"query": "x"})) == ["google"]
    assert served_by(fakes, lambda: customer.post("/search/news", {"query": "x"})) == ["brave"]
    assert served_by(fakes, lambda: customer.post("/search/videos", {"query": "x"})) == ["brave"]


def test_per_operation_providers_override_search_provider(searcher, fakes):
    customer = searcher("searxng", "brave", "youtube", search_provider="searxng",
                        news_search_provider="Brave", video_search_provider="youtube")
    assert served_by(fakes, lambda: customer.post("/search", {"query": "x"})) == ["searxng"]
    assert served_by(fakes, lambda: customer.post("/search/news", {"query": "x"})) == ["brave"]
    assert served_by(fakes, lambda: customer.post("/search/videos", {"query": "x"})) == [
        "youtube"]


@pytest.mark.parametrize(("settings", "message"), [
    ({"search_provider": "bing"}, "SEARCH_PROVIDER=bing: unknown search provider"),
    ({"search_provider": "brave"}, "SEARCH_PROVIDER=brave: that provider is not configured"),
    ({"news_search_provider": "youtube", "youtube_api_key": "k"},
     "NEWS_SEARCH_PROVIDER=youtube: youtube has no news search"),
    ({"video_search_provider": "google", "google_cse_key": "k", "google_cse_cx": "c"},
     "VIDEO_SEARCH_PROVIDER=google: google has no videos search"),
    ({"google_cse_key": "k"}, "needs both GOOGLE_CSE_KEY and GOOGLE_CSE_CX"),
])
def test_a_wrong_configuration_fails_at_startup(sqlite_url, redis_url, settings, message):
    with pytest.raises(ValueError, match=message):
        create_app(make_config(sqlite_url, redis_url, searxng_url="http://127.0.0.1:9",
                               **settings))


def test_settings_are_read_from_the_environment(monkeypatch, sqlite_url, redis_url, fakes):
    monkeypatch.setenv("DATABASE_URL", sqlite_url)
    monkeypatch.setenv("REDIS_URL", redis_url)
    monkeypatch.setenv("SEARCH_PROVIDER", "brave")
    monkeypatch.setenv("NEWS_SEARCH_PROVIDER", "searxng")
    monkeypatch.setenv("VIDEO_SEARCH_PROVIDER", "youtube")
    monkeypatch.setenv("SEARXNG_URL", fakes["searxng"].url)
    monkeypatch.setenv("BRAVE_API_KEY", "brave-env-key")
    monkeypatch.setenv("BRAVE_API_URL", fakes["brave"].url)
    monkeypatch.setenv("GOOGLE_CSE_KEY", "google-env-key")
    monkeypatch.setenv("GOOGLE_CSE_CX", "cx-env")
    monkeypatch.setenv("GOOGLE_CSE_URL", fakes["google"].url)
    monkeypatch.setenv("YOUTUBE_API_KEY", "youtube-env-key")
    monkeypatch.setenv("YOUTUBE_API_URL", fakes["youtube"].url)
    monkeypatch.setenv("SEARCH_TIMEOUT", "2.5")
    config = Config.from_env()
    search = config.search
    assert (search.search_provider, search.news_search_provider,
            search.video_search_provider) == ("brave", "searxng", "youtube")
    assert (search.google_cse_key, search.google_cse_cx, search.search_timeout) == (
        "google-env-key", "cx-env", 2.5)
    assert config.video.youtube_api_key == "youtube-env-key"
    chosen = create_app(config).extensions["webdata.search"].chosen
    assert {kind: provider.name for kind, provider in chosen.items()} == {
        "web": "brave", "news": "searxng", "videos": "youtube"}
    assert chosen["web"].timeout == 2.5


def test_the_defaults_point_at_the_real_providers():
    search, video = SearchConfig(), VideoConfig()
    assert search.brave_api_url == "https://api.search.brave.com/res/v1"
    assert search.google_cse_url == "https://www.googleapis.com/customsearch/v1"
    assert video.youtube_api_url == "https://www.googleapis.com/youtube/v3"
    assert search.search_timeout == 10.0


def test_the_operations_are_documented(searcher):
    spec = searcher("searxng").app.test_client().get(
        "/api/service/v1/openapi.json").get_json()
    for path in ("/search", "/search/news", "/search/videos"):
        operation = spec["paths"][f"/api/service/v1{path}"]["post"]
        assert {"200", "402", "422", "502", "503"} <= set(operation["responses"])
    schemas = spec["components"]["schemas"]
    assert set(schemas["VideoResult"]["properties"]) == {
        "position", "url", "title", "snippet", "channel", "duration_seconds", "thumbnail",
        "published_at", "engagement"}
    assert set(schemas["NewsResult"]["properties"]) == {
        "position", "url", "title", "snippet", "source", "published_at"}
    request = schemas["SearchRequest"]["properties"]
    assert request["query"]["maxLength"] == 400
    assert (request["limit"]["minimum"], request["limit"]["maximum"]) == (1, 10)
