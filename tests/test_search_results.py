"""News and video results: sources, dates, durations, thumbnails and engagement, end to end,
and the date normaliser they share. The fakes answer with ``Date: Thu, 15 Jan 2026 16:30:00
GMT``, which relative ages are counted from."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from api.search.normalise import published_at
from tests.support.fakes.search_providers import VIDEOS_QUOTA_KEY

pytest_plugins = ["tests.support.fakes.fixtures"]

RECEIVED = datetime(2026, 1, 15, 16, 30, tzinfo=UTC)


def test_brave_news_sources_and_dates(searcher):
    results = searcher("brave").post("/search/news", {"query": "tides", "limit": 6}).get_json()[
        "results"]
    assert [(r["url"], r["source"], r["published_at"]) for r in results] == [
        # page_age, naive: UTC
        ("https://www.bbc.co.uk/news/tides-1", "BBC News", "2026-01-15T14:30:00Z"),
        # no page_age: "5 minutes ago" is exact to the minute, so resolved; meta_url's host
        ("https://news.example.net/flood-warning", "news.example.net", "2026-01-15T16:25:00Z"),
        # "3 days ago" is not exact: kept as given
        ("https://paper.example.com/estuary", "paper.example.com", "3 days ago"),
        # an offset is converted to UTC
        ("https://wire.example.com/harbour", "Wire", "2026-01-14T08:00:00Z"),
        # (the BBC story again, under http://bbc.co.uk/…#comments, is gone)
        ("https://gazette.example.org/just-in", "gazette.example.org", "2026-01-15T16:30:00Z"),
        ("https://news.example.com/story/7", "news.example.com", "2026-01-10T08:00:00Z"),
    ]
    assert results[0]["title"] == "Tides rise again"
    assert results[0]["snippet"] == "Spring tides…"


def test_searxng_news_source_is_the_host_and_missing_dates_are_null(searcher):
    results = searcher("searxng").post("/search/news", {"query": "tides", "limit": 3}).get_json()[
        "results"]
    assert [(r["source"], r["published_at"]) for r in results] == [
        ("bbc.co.uk", "2026-01-15T14:30:00Z"), ("news.example.net", None),
        ("paper.example.com", None)]


@pytest.mark.parametrize(("value", "expected"), [
    ("2026-01-15T14:30:00", "2026-01-15T14:30:00Z"),
    ("2026-01-15T14:30:00.123456Z", "2026-01-15T14:30:00Z"),
    ("2026-01-15T15:30:00+01:00", "2026-01-15T14:30:00Z"),
    ("Thu, 15 Jan 2026 14:30:00 GMT", "2026-01-15T14:30:00Z"),
    ("2026-01-15", "2026-01-15"),
    ("January 15, 2026", "2026-01-15"),
    ("just now", "2026-01-15T16:30:00Z"),
    ("45 seconds ago", "2026-01-15T16:29:15Z"),
    ("a minute ago", "2026-01-15T16:29:00Z"),
    ("90 mins ago", "2026-01-15T15:00:00Z"),
    ("an hour ago", "an hour ago"),
    ("2 hours ago", "2 hours ago"),
    ("1 week ago", "1 week ago"),
    ("yesterday", "yesterday"),
    ("  sometime  ", "sometime"),
    ("", None),
    (None, None),
    (1736951400, None),
    # past what a date can be: kept as the provider wrote it (they raised OverflowError: 500)
    ("99999999999999 minutes ago", "99999999999999 minutes ago"),
    ("0001-01-01T00:00:00+14:00", "0001-01-01T00:00:00+14:00"),
    ("9999-12-31T23:59:59-14:00", "9999-12-31T23:59:59-14:00"),
])
def test_published_at(value, expected):
    assert published_at(value, RECEIVED) == expected


def test_video_durations_in_every_notation_and_no_engagement_without_a_key(searcher, fakes):
    before = len(fakes["youtube"].received)
    results = searcher("searxng").post("/search/videos", {"query": "x", "limit": 7}).get_json()[
        "results"]
    assert [(r["url"], r["duration_seconds"], r["engagement"]) for r in results] == [
        ("https://www.youtube.com/watch?v=dQw4w9WgXcQ", 213, None),  # "3:33"
        # youtu.be/dQw4w9WgXcQ is the same video: gone
        ("https://www.youtube.com/watch?v=9bZkp7q19f0", 252, None),  # "PT4M12S"
        ("https://vimeo.com/76979871", 754, None),  # 754.0 seconds
        ("https://www.youtube.com/shorts/aqz-KE-bpKQ", None, None),  # null
        ("https://www.dailymotion.com/video/x8abc", 13500, None),  # "03:45:00"
        ("https://www.youtube.com/watch?v=deleted0001", 60, None),  # "1:00"
        ("https://videos.example.com/v/8", 80, None),  # 80
    ]
    assert len(fakes["youtube"].received) == before
    first = results[0]
    assert (first["title"], first["channel"], first["thumbnail"], first["published_at"]) == (
        "Never Gonna Give You Up & more", "Rick Astley",
        "https://i.ytimg.com/vi/dQw4w9WgXcQ/hqdefault.jpg", "2009-10-25T06:57:33Z")
    # protocol-relative thumbnails made https; none is null, never ""
    assert results[1]["thumbnail"] == "https://i.ytimg.com/vi/9bZkp7q19f0/hqdefault.jpg"
    assert results[4]["thumbnail"] is None
    assert results[2]["published_at"] == "2013-10-03"


@pytest.mark.parametrize("provider", ["searxng", "brave"])
def test_engagement_of_youtube_links_with_one_videos_list_call(searcher, fakes, provider):
    before = len(fakes["youtube"].received)
    response = searcher(provider, "youtube").post("/search/videos", {"query": "x", "limit": 6})
    assert response.status_code == 200
    results = response.get_json()["results"]
    assert {r["url"]: r["engagement"] for r in results} == {
        "https://www.youtube.com/watch?v=dQw4w9WgXcQ":
            {"views": 1500000000, "likes": 17000000, "comments": 2300000},
        "https://www.youtube.com/watch?v=9bZkp7q19f0":
            {"views": 5000000000, "likes": 29000000, "comments": None},  # comments disabled
        "https://vimeo.com/76979871": None,  # not the supported platform
        "https://www.youtube.com/shorts/aqz-KE-bpKQ":
            {"views": 1234, "likes": None, "comments": None},  # likes hidden
        "https://www.dailymotion.com/video/x8abc": None,
        "https://www.youtube.com/watch?v=deleted0001": None,  # videos.list does not know it
    }
    # the Data API fills a duration the provider did not give
    assert results[3]["duration_seconds"] == 634
    calls = fakes["youtube"].received[before:]
    assert [c.path for c in calls] == ["/videos"]
    assert calls[0].params["id"] == "dQw4w9WgXcQ,9bZkp7q19f0,aqz-KE-bpKQ,deleted0001"


def test_a_failed_engagement_lookup_leaves_engagement_null(searcher, caplog):
    customer = searcher("brave", "youtube", youtube_api_key=VIDEOS_QUOTA_KEY)
    response = customer.post("/search/videos", {"query": "x", "limit": 3})
    assert response.status_code == 200
    assert [r["engagement"] for r in response.get_json()["results"]] == [None, None, None]
    assert customer.balance() == 95
    assert "quotaExceeded" in caplog.text


def test_a_failed_engagement_lookup_of_the_youtube_provider_keeps_its_results(searcher):
    customer = searcher("youtube", youtube_api_key=VIDEOS_QUOTA_KEY)
    results = customer.post("/search/videos", {"query": "x"}).get_json()["results"]
    assert [(r["url"], r["duration_seconds"], r["engagement"]) for r in results] == [
        ("https://www.youtube.com/watch?v=dQw4w9WgXcQ", None, None),
        ("https://www.youtube.com/watch?v=9bZkp7q19f0", None, None),
        ("https://www.youtube.com/watch?v=aqz-KE-bpKQ", None, None)]


def test_web_and_news_results_are_not_enriched(searcher, fakes):
    customer = searcher("searxng", "youtube")
    before = len(fakes["youtube"].received)
    web = customer.post("/search", {"query": "x"}).get_json()["results"]
    assert set(web[0]) == {"position", "url", "title", "snippet"}
    customer.post("/search/news", {"query": "x"})
    assert len(fakes["youtube"].received) == before
