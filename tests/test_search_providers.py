"""Each adapter end to end: what it asks its provider (as the fakes record it) and how the
provider's answer comes back. Country and language mappings are in the provider modules."""

from __future__ import annotations

import pytest

from tests.support.fakes.search_providers import KEYS

pytest_plugins = ["tests.support.fakes.fixtures"]

QUERY = '"async traits" site:github.com'


# --- SearXNG ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("path", "category"), [
    ("/search", "general"), ("/search/news", "news"), ("/search/videos", "videos")])
def test_searxng_request(searcher, fakes, path, category):
    customer = searcher("searxng")
    assert customer.post(path, {"query": QUERY, "limit": 3, "language": "en",
                                "country": "us"}).status_code == 200
    received = fakes["searxng"].last()
    assert received.path == "/search"
    assert received.params == {"q": QUERY, "format": "json", "categories": category,
                               "pageno": "1", "language": "en-US"}


@pytest.mark.parametrize(("body", "language"), [
    ({"language": "de"}, "de"), ({"language": "pt", "country": "br"}, "pt-BR"),
    ({"country": "fr"}, None), ({}, None)])
def test_searxng_language(searcher, fakes, body, language):
    searcher("searxng").post("/search", {"query": "tides", **body})
    assert fakes["searxng"].last().params.get("language") == language


def test_searxng_page_is_cut_to_limit(searcher, fakes):
    results = searcher("searxng").post("/search", {"query": "tides", "limit": 7}).get_json()[
        "results"]
    assert len(results) == 7
    assert [r["position"] for r in results] == list(range(1, 8))


# --- Brave ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("path", "endpoint", "limit", "count"), [
    ("/search", "/web/search", 10, 15), ("/search", "/web/search", 2, 7),
    ("/search/news", "/news/search", 10, 15), ("/search/videos", "/videos/search", 4, 9)])
def test_brave_request(searcher, fakes, path, endpoint, limit, count):
    customer = searcher("brave")
    response = customer.post(path, {"query": QUERY, "limit": limit, "country": "gb",
                                    "language": "en"})
    assert response.status_code == 200, response.get_json()
    assert len(response.get_json()["results"]) == limit
    received = fakes["brave"].last()
    assert received.path == endpoint
    assert received.params == {"q": QUERY, "count": str(count), "country": "GB",
                               "search_lang": "en-gb"}
    assert received.headers["x-subscription-token"] == KEYS["brave"]
    assert received.headers["accept"] == "application/json"


@pytest.mark.parametrize(("body", "search_lang"), [
    ({"language": "ja"}, "jp"), ({"language": "zh"}, "zh-hans"),
    ({"language": "zh", "country": "tw"}, "zh-hant"), ({"language": "pt", "country": "br"},
                                                       "pt-br"),
    ({"language": "pt"}, "pt-pt"), ({"language": "no"}, "nb"), ({"language": "nb"}, "nb"),
    ({"language": "en", "country": "us"}, "en"), ({"language": "de"}, "de"), ({}, None)])
def test_brave_search_lang(searcher, fakes, body, search_lang):
    searcher("brave").post("/search", {"query": "tides", **body})
    assert fakes["brave"].last().params.get("search_lang") == search_lang


def test_brave_strong_tags_and_duplicates(searcher):
    results = searcher("brave").post("/search", {"query": "tides"}).get_json()["results"]
    assert results[0]["snippet"] == "Why async traits took years to land."
    assert [r["url"] for r in results].count("https://github.com/rust-lang/async-traits") == 1
    assert not any(r["url"].startswith("http://www.github.com") for r in results)
    assert len(results) == 10


# --- Google -----------------------------------------------------------------------------------

def test_google_request(searcher, fakes):
    customer = searcher("google")
    response = customer.post("/search", {"query": QUERY, "limit": 5, "country": "de",
                                         "language": "de"})
    assert response.status_code == 200
    received = fakes["google"].last()
    assert received.params == {"cx": "017576662512468239146:x", "q": QUERY, "num": "5",
                               "gl": "de", "hl": "de", "lr": "lang_de"}
    # the key travels in a header, never in the URL
    assert received.headers["x-goog-api-key"] == KEYS["google"]
    results = response.get_json()["results"]
    # five asked, one of them the first page again: four left
    assert [r["url"] for r in results] == [
        "https://github.com/rust-lang/async-traits", "https://blog.example.org/async?page=2",
        "https://blog.example.org/async?page=3", "https://example.com/result/4"]
    assert results[0]["title"] == "Async traits & you"
    assert results[0]["snippet"] == "Why async traits took years to land."  # newline folded


@pytest.mark.parametrize(("body", "expected"), [
    ({"language": "he"}, {"hl": "iw", "lr": "lang_iw"}),
    ({"language": "zh", "country": "hk"}, {"hl": "zh-TW", "lr": "lang_zh-TW", "gl": "hk"}),
    ({"language": "zh"}, {"hl": "zh-CN", "lr": "lang_zh-CN"}),
    ({"country": "us"}, {"gl": "us"})])
def test_google_languages(searcher, fakes, body, expected):
    searcher("google").post("/search", {"query": "tides", **body})
    params = fakes["google"].last().params
    assert {k: params[k] for k in ("gl", "hl", "lr") if k in params} == expected


# --- YouTube ----------------------------------------------------------------------------------

def test_youtube_search_then_one_videos_list(searcher, fakes):
    customer = searcher("youtube")
    before = len(fakes["youtube"].received)
    response = customer.post("/search/videos", {"query": QUERY, "limit": 4, "country": "us",
                                                "language": "en"})
    assert response.status_code == 200, response.get_json()
    search, videos = fakes["youtube"].received[before:]
    assert (search.path, videos.path) == ("/search", "/videos")
    assert search.params == {"part": "snippet", "type": "video", "q": QUERY, "maxResults": "4",
                             "regionCode": "US", "relevanceLanguage": "en"}
    assert videos.params == {"part": "contentDetails,statistics",
                             "id": "dQw4w9WgXcQ,9bZkp7q19f0,aqz-KE-bpKQ"}
    assert search.headers["x-goog-api-key"] == videos.headers["x-goog-api-key"] == KEYS[
        "youtube"]
    results = response.get_json()["results"]
    # four asked; the channel YouTube slipped in among them is not a video
    assert results[0] == {
        "position": 1, "url": "https://www.youtube.com/watch?v=dQw4w9WgXcQ",
        "title": "Never Gonna Give You Up & more",
        "snippet": "Never Gonna Give You Up & more — official video.", "channel": "Rick Astley",
        "duration_seconds": 213, "thumbnail": "https://i.ytimg.com/vi/dQw4w9WgXcQ/hqdefault.jpg",
        "published_at": "2009-10-25T06:57:33Z",
        "engagement": {"views": 1500000000, "likes": 17000000, "comments": 2300000}}
    assert [(r["position"], r["duration_seconds"], r["engagement"]) for r in results[1:]] == [
        (2, 252, {"views": 5000000000, "likes": 29000000, "comments": None}),
        (3, 634, {"views": 1234, "likes": None, "comments": None})]


def test_youtube_chinese_is_split_by_script(searcher, fakes):
    searcher("youtube").post("/search/videos", {"query": "x", "language": "zh", "country": "tw"})
    assert fakes["youtube"].last("/search").params["relevanceLanguage"] == "zh-Hant"
    searcher("youtube").post("/search/videos", {"query": "x", "language": "zh"})
    assert fakes["youtube"].last("/search").params["relevanceLanguage"] == "zh-Hans"


def test_youtube_no_results_asks_videos_list_nothing(searcher, fakes):
    before = len(fakes["youtube"].received)
    response = searcher("youtube").post("/search/videos", {"query": "fake:empty"})
    assert response.get_json()["results"] == []
    assert [r.path for r in fakes["youtube"].received[before:]] == ["/search"]
