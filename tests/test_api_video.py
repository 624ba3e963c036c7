"""POST /video-platform end to end: the API, a warm worker and the test site's fake platform.

The normal worker pool reads the watch page only (no Data API key); ``data_api_app``'s worker
also asks the fake Data API, which then supplies counts, caption status and embeddability.
"""

from __future__ import annotations

import pytest

from tests.conftest import new_customer

PUBLIC = "https://www.youtube.com/watch?v=pUbLiC_vid1"


@pytest.fixture
def data_api_customer(data_api_app):
    return new_customer(data_api_app)


def test_public_video_from_the_page(customer, site_server):
    response = customer.post("/video-platform", {"url": PUBLIC})
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert body["request_id"] == response.headers["X-Request-Id"]
    assert body["credits_used"] == 1
    assert body["video_id"] == "pUbLiC_vid1"
    assert body["url"] == PUBLIC
    assert body["title"] == "Build a JSON parser {part 1}; no regex};"
    assert body["source"] == "page"
    assert body["engagement"] == {"views": 1523000, "likes": 48213, "comments": None}
    assert body["embeddable"] is True and body["is_live"] is False
    assert body["duration_seconds"] > 0
    assert body["channel"]["id"] and body["channel"]["name"]
    assert body["captions"]["status"] == "available"
    assert any(track["auto_generated"] for track in body["captions"]["tracks"])
    assert body["related_videos"] and all(r["video_id"] != "pUbLiC_vid1"
                                          for r in body["related_videos"])
    assert "final_url" not in body  # the contract's video answer has no page fields
    assert customer.balance() == 99
    latest = customer.activity()[0]
    assert (latest["operation"], latest["credits"], latest["url"]) == ("video_platform", 1, PUBLIC)


@pytest.mark.parametrize("link", [
    "https://youtu.be/pUbLiC_vid1?si=abc",
    "https://www.youtube.com/shorts/pUbLiC_vid1",
    "https://www.youtube.com/embed/pUbLiC_vid1",
    "https://www.youtube.com/live/pUbLiC_vid1",
    "https://m.youtube.com/watch?v=pUbLiC_vid1&t=42",
    "https://music.youtube.com/watch?v=pUbLiC_vid1",
    "https://www.youtube-nocookie.com/embed/pUbLiC_vid1",
])
def test_every_link_form(customer, link):
    body = customer.post("/video-platform", {"url": link}).get_json()
    assert (body["video_id"], body["url"]) == ("pUbLiC_vid1", PUBLIC)


@pytest.mark.parametrize("link", [
    "https://vimeo.com/76979871",
    "https://www.youtube.com/channel/UCabcdefghijklmnopqrstuv",
    "https://www.youtube.com/playlist?list=PL1234567890",
    "https://youtube.com.evil.example/watch?v=pUbLiC_vid1",
    "https://www.youtube.com/watch?v=short",
])
def test_other_links_are_refused_before_any_fetch(customer, site_server, link):
    fetched = site_server.requests["/watch"]
    response = customer.post("/video-platform", {"url": link})
    assert response.status_code == 422
    assert response.get_json()["error"] == "unsupported_video"
    assert site_server.requests["/watch"] == fetched
    assert customer.balance() == 100
    assert customer.activity()[0]["status"] == "failed"


@pytest.mark.parametrize("video_id", ["privateVid1", "noEmbed_v01", "deletedVid1"])
def test_unavailable_videos_cost_nothing(customer, video_id):
    response = customer.post("/video-platform", {"url": f"https://youtu.be/{video_id}"})
    assert response.status_code == 422
    body = response.get_json()
    assert body["error"] == "video_unavailable"
    assert video_id in body["message"]
    assert customer.balance() == 100


def test_a_consent_wall_is_a_fetch_failure_not_an_unavailable_video(customer):
    response = customer.post("/video-platform", {"url": "https://youtu.be/cOnSeNtWall"})
    assert response.status_code == 502
    assert response.get_json()["error"] == "fetch_failed"
    assert customer.balance() == 100


def test_hidden_likes_stay_null_and_live_has_no_duration(customer):
    hidden = customer.post("/video-platform", {"url": "https://youtu.be/hIdDenLikes"}).get_json()
    assert hidden["engagement"]["likes"] is None
    live = customer.post("/video-platform", {"url": "https://youtu.be/liveStream1"}).get_json()
    assert (live["is_live"], live["duration_seconds"]) == (True, None)
    none = customer.post("/video-platform", {"url": "https://youtu.be/noCaptions1"}).get_json()
    assert none["captions"] == {"status": "none", "tracks": []}


def test_data_api_supplies_counts(data_api_customer):
    body = data_api_customer.post("/video-platform", {"url": PUBLIC}).get_json()
    assert body.get("source") == "data_api", body
    assert body["engagement"] == {"views": 1523480, "likes": 48215, "comments": 1874}
    assert body["title"] == "Build a JSON parser {part 1}; no regex};"  # the page's
    hidden = data_api_customer.post(
        "/video-platform", {"url": "https://youtu.be/hIdDenLikes"}).get_json()
    assert hidden["source"] == "data_api"
    assert (hidden["engagement"]["likes"], hidden["engagement"]["comments"]) == (None, None)
    assert data_api_customer.balance() == 98


@pytest.mark.parametrize("video_id", ["privateVid1", "noEmbed_v01", "deletedVid1"])
def test_data_api_unavailable(data_api_customer, video_id):
    response = data_api_customer.post("/video-platform", {"url": f"https://youtu.be/{video_id}"})
    assert response.status_code == 422
    assert response.get_json()["error"] == "video_unavailable"
    assert data_api_customer.balance() == 100


def test_data_api_quota_error_falls_back_to_the_page(data_api_customer):
    response = data_api_customer.post("/video-platform",
                                      {"url": "https://youtu.be/oLdLikes-01"})
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert body["source"] == "page"
    assert body["engagement"]["likes"] == 1234
    assert data_api_customer.balance() == 99
