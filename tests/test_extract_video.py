"""Tests for crawler.extract.video on saved watch pages and Data API answers (no network).

The fixtures in tests/fixtures/video are shared with the end-to-end tests' fake YouTube server:
their README lists each state's video id, and VIDEO_IDS below must agree with it.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import asdict, fields, replace
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from core.items.video import Captions, Channel, Engagement, Video
from core.video_platform import (
    data_api_engagement,
    data_api_videos_url,
    parse_video_url,
    watch_url,
)
from crawler.exceptions import CrawlError, FetchFailed, VideoUnavailable
from crawler.extract.fetched import FetchedPage
from crawler.extract.video import MAX_RELATED, apply_data_api, extract_video
from crawler.extract.youtube_page import initial_data, like_count, player_response

#: Saved HTML as a page fetched from that URL, what extractors take.
fetched = FetchedPage.from_html

FIXTURES = Path(__file__).parent / "fixtures" / "video"
VIDEO_IDS = {
    "public": "pUbLiC_vid1",
    "old_likes": "oLdLikes-01",
    "hidden_likes": "hIdDenLikes",
    "no_captions": "noCaptions1",
    "live": "liveStream1",
    "private": "privateVid1",
    "not_embeddable": "noEmbed_v01",
    "deleted": "deletedVid1",
}
PLAYABLE = ("public", "old_likes", "hidden_likes", "no_captions", "live")
FIELDS = {
    "video_id", "url", "title", "description", "published_at", "duration_seconds", "channel",
    "thumbnails", "tags", "category", "is_live", "is_family_safe", "embeddable", "engagement",
    "captions", "related_videos", "source",
}
FAKE_BASE = "http://127.0.0.2:8765"  # where the crawler fetches from in the end-to-end tests


def page(state: str) -> str:
    return (FIXTURES / f"{state}.html").read_text(encoding="utf-8")


def answer(state: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{state}.json").read_text(encoding="utf-8"))


def extract(state: str) -> Video:
    video_id = VIDEO_IDS[state]
    return extract_video(fetched(watch_url(video_id, FAKE_BASE), page(state)), video_id=video_id)


def player_page(player: dict[str, Any], data: dict[str, Any] | None = None) -> str:
    """A minimal watch page around the given objects, for states no fixture covers."""
    scripts = f"<script>var ytInitialPlayerResponse = {json.dumps(player)};var x = 1;</script>"
    if data is not None:
        scripts += f"<script>var ytInitialData = {json.dumps(data)};</script>"
    return f"<!DOCTYPE html><html><head></head><body>{scripts}</body></html>"


def public_player() -> dict[str, Any]:
    player = player_response(page("public"))
    assert player is not None
    return player


# --- fixtures -------------------------------------------------------------------------------


def test_fixture_ids_match_readme_and_pages() -> None:
    readme = (FIXTURES / "README.md").read_text(encoding="utf-8")
    assert dict(re.findall(r"^\| `(\w+)` \| `([\w-]{11})` \|", readme, re.MULTILINE)) == VIDEO_IDS
    assert len(set(VIDEO_IDS.values())) == len(VIDEO_IDS)
    for state, video_id in VIDEO_IDS.items():
        assert parse_video_url(watch_url(video_id)) == video_id
        assert f'<link rel="canonical" href="https://www.youtube.com/watch?v={video_id}">' in page(
            state)
        items = answer(state)["items"]
        assert [item["id"] for item in items] == ([] if state == "deleted" else [video_id])


# --- link forms -----------------------------------------------------------------------------


@pytest.mark.parametrize("url", [
    "https://www.youtube.com/watch?v=dQw4w9WgXcQ",
    "http://www.youtube.com/watch?v=dQw4w9WgXcQ",
    "https://youtube.com/watch?v=dQw4w9WgXcQ",
    "https://m.youtube.com/watch?v=dQw4w9WgXcQ",
    "https://music.youtube.com/watch?v=dQw4w9WgXcQ&list=RDAMVMdQw4w9WgXcQ",
    "https://www.youtube.com/watch?feature=share&v=dQw4w9WgXcQ&t=42s",
    "https://www.youtube.com/watch/?v=dQw4w9WgXcQ",
    "https://www.youtube.com/watch?v=dQw4w9WgXcQ#t=30",
    "HTTPS://WWW.YOUTUBE.COM/watch?v=dQw4w9WgXcQ",
    "https://www.youtube.com:443/watch?v=dQw4w9WgXcQ",
    "https://www.youtube.com/shorts/dQw4w9WgXcQ",
    "https://youtube.com/shorts/dQw4w9WgXcQ/?feature=share",
    "https://www.youtube.com/embed/dQw4w9WgXcQ?start=10",
    "https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ",
    "https://youtube-nocookie.com/embed/dQw4w9WgXcQ/",
    "https://www.youtube.com/live/dQw4w9WgXcQ?si=abc",
    "https://www.youtube.com/v/dQw4w9WgXcQ",
    "https://m.youtube.com/shorts/dQw4w9WgXcQ",
    "https://youtu.be/dQw4w9WgXcQ",
    "http://youtu.be/dQw4w9WgXcQ/",
    "https://youtu.be/dQw4w9WgXcQ?t=42",
    "https://youtu.be/dQw4w9WgXcQ?si=Xy_9-abcDEF",
    "  https://youtu.be/dQw4w9WgXcQ  ",
])
def test_video_link_forms_are_accepted(url: str) -> None:
    assert parse_video_url(url) == "dQw4w9WgXcQ"


def test_ids_keep_their_case_dashes_and_underscores() -> None:
    assert parse_video_url("https://youtu.be/-_aZ09-_aZ0") == "-_aZ09-_aZ0"
    assert parse_video_url("https://www.youtube.com/watch?v=oLdLikes-01") == "oLdLikes-01"


@pytest.mark.parametrize("url", [
    "youtube.com/watch?v=dQw4w9WgXcQ",  # no scheme
    "www.youtube.com/watch?v=dQw4w9WgXcQ",
    "//www.youtube.com/watch?v=dQw4w9WgXcQ",
    "youtu.be/dQw4w9WgXcQ",
    "ftp://www.youtube.com/watch?v=dQw4w9WgXcQ",
    "https://youtube.com.evil.com/watch?v=dQw4w9WgXcQ",
    "https://notyoutube.com/watch?v=dQw4w9WgXcQ",
    "https://evil.com/youtube.com/watch?v=dQw4w9WgXcQ",
    "https://www.youtube.com@evil.com/watch?v=dQw4w9WgXcQ",
    "https://gaming.youtube.com/watch?v=dQw4w9WgXcQ",
    "https://youtu.be.evil.com/dQw4w9WgXcQ",
    "https://www.youtube.com:8080/watch?v=dQw4w9WgXcQ",
    "https://www.youtube.com/watch?v=dQw4w9WgXc",  # 10 characters
    "https://www.youtube.com/watch?v=dQw4w9WgXcQQ",  # 12 characters
    "https://www.youtube.com/watch?v=dQw4w9WgX.Q",
    "https://www.youtube.com/watch?list=PLrAXtmErZgOeiKm4sgNOknGvNjby9efdf",
    "https://www.youtube.com/watch",
    "https://www.youtube.com/playlist?list=PLrAXtmErZgOeiKm4sgNOknGvNjby9efdf",
    "https://www.youtube.com/channel/UCuAXFkgsw1L7xaCfnd5JJOw",
    "https://www.youtube.com/@RickAstleyYT",
    "https://www.youtube.com/",
    "https://www.youtube.com/shorts/",
    "https://www.youtube.com/shorts/dQw4w9WgXcQ/extra",
    "https://www.youtube.com/embed/videoseries?list=PLrAXtmErZgOeiKm4sgNOknGvNjby9efdf",
    "https://www.youtube.com/embed/live_stream?channel=UCuAXFkgsw1L7xaCfnd5JJOw",
    "https://www.youtube.com/dQw4w9WgXcQ",  # bare id path only on youtu.be
    "https://youtu.be/watch?v=dQw4w9WgXcQ",
    "https://youtu.be/",
    "https://www.youtube.com/results?search_query=dQw4w9WgXcQ",
    "https://[::1/watch?v=dQw4w9WgXcQ",  # malformed
    "",
])
def test_other_links_are_refused(url: str) -> None:
    assert parse_video_url(url) is None


def test_watch_url_is_canonical_unless_a_base_is_given() -> None:
    assert watch_url("dQw4w9WgXcQ") == "https://www.youtube.com/watch?v=dQw4w9WgXcQ"
    assert watch_url("dQw4w9WgXcQ", "http://127.0.0.2:8765/") == (
        "http://127.0.0.2:8765/watch?v=dQw4w9WgXcQ")


# --- the watch page -------------------------------------------------------------------------


def test_public_page_record() -> None:
    item = extract("public")
    assert [field.name for field in fields(Video)] == [  # the contract's order
        "video_id", "url", "title", "description", "published_at", "duration_seconds", "channel",
        "thumbnails", "tags", "category", "is_live", "is_family_safe", "embeddable",
        "engagement", "captions", "related_videos", "source"]
    video = asdict(item)
    assert set(video) == FIELDS
    assert json.loads(json.dumps(video)) == video  # plain JSON types only
    assert video["video_id"] == "pUbLiC_vid1"
    assert video["url"] == "https://www.youtube.com/watch?v=pUbLiC_vid1"  # not the fetch base
    assert video["title"] == "Build a JSON parser {part 1}; no regex};"
    assert video["description"].startswith("How to read the JSON a page assigns in a <script>")
    assert "\n\nChapters:\n0:00 Intro {\n" in video["description"]  # line breaks kept
    assert video["published_at"] == "2023-03-14T16:30:00Z"  # 09:30-07:00 in UTC
    assert video["duration_seconds"] == 213
    assert video["channel"] == {"id": "UCpUbLiCcHaNnEl0000000aa", "name": "Parser Lab",
                                "url": "https://www.youtube.com/@parserlab"}  # http upgraded
    assert [t["width"] for t in video["thumbnails"]] == [120, 320, 480, 640]
    assert video["thumbnails"][2]["url"].startswith("https://i.ytimg.com/vi/pUbLiC_vid1/hqdefault")
    assert video["thumbnails"][2]["height"] == 360
    assert video["tags"] == ["json", "parser", "python"]  # the repeated keyword once
    assert video["category"] == "Education"
    assert video["is_live"] is False
    assert video["is_family_safe"] is True
    assert video["embeddable"] is True
    assert video["engagement"] == {"views": 1523000, "likes": 48213, "comments": None}
    assert video["source"] == "page"


def test_likes_from_the_view_model_label_not_the_toggled_state() -> None:
    # "48K" is shown; the accessibility text has the exact count; toggled would say 48,214
    assert extract("public").engagement.likes == 48213


def test_likes_from_the_older_toggle_button_label_and_window_assignment() -> None:
    html = page("old_likes")
    assert 'window["ytInitialData"] = {' in html and "var ytInitialData" not in html
    assert asdict(extract("old_likes").engagement) == {"views": 98765, "likes": 1234,
                                                       "comments": None}


def test_hidden_likes_and_missing_fields_are_null_never_zero_or_empty() -> None:
    video = asdict(extract("hidden_likes"))
    assert video["engagement"] == {"views": 4321, "likes": None, "comments": None}
    assert video["description"] is None  # "" on the page
    assert video["tags"] == []  # no keywords
    assert video["is_family_safe"] is None  # no isFamilySafe
    assert video["published_at"] == "2022-11-05T22:15:00Z"  # 23:15+01:00


def test_like_labels_outside_the_primary_info_buttons_are_ignored() -> None:
    def with_buttons(buttons: list[Any], **elsewhere: Any) -> dict[str, Any]:
        primary = {"videoPrimaryInfoRenderer": {"videoActions": {"menuRenderer": {
            "topLevelButtons": buttons}}, "viewCount": {"accessibilityText": "9,999 likes"}}}
        return {"contents": {"twoColumnWatchNextResults": {"results": {"results": {
            "contents": [primary, elsewhere]}}}}}

    factoid = {"factoidRenderer": {"accessibilityText": "777 likes"}}
    assert like_count(with_buttons([], other=factoid)) is None
    dislikes = {"toggleButtonRenderer": {"defaultText": {"accessibility": {
        "accessibilityData": {"label": "56 dislikes"}}}}}
    assert like_count(with_buttons([dislikes])) is None
    abbreviated = {"buttonViewModel": {"accessibilityText": "like this video along with 1.2K"}}
    assert like_count(with_buttons([abbreviated])) is None  # never guessed from "1.2K"
    toggled_first = {"toggleButtonViewModel": {
        "toggledButtonViewModel": {"buttonViewModel": {
            "accessibilityText": "like this video along with 11 other people"}},
        "defaultButtonViewModel": {"buttonViewModel": {
            "accessibilityText": "like this video along with 10 other people"}}}}
    assert like_count(with_buttons([toggled_first])) == 10  # not the count after a click
    moved = {"someFutureRenderer": {"inner": [{"label": "2,345 likes"}]}}
    assert like_count(with_buttons([moved])) == 2345  # found wherever it sits in the buttons
    assert like_count(None) is None


def test_like_search_survives_deep_nesting() -> None:
    deep: dict[str, Any] = {"label": "12 likes"}
    for _ in range(5000):
        deep = {"wrapper": [deep]}
    data = {"contents": {"videoPrimaryInfoRenderer": {"videoActions": deep}}}
    assert like_count(data) == 12


def test_captions_available_with_tracks() -> None:
    assert asdict(extract("public").captions) == {"status": "available", "tracks": [
        {"language": "en", "name": "English", "auto_generated": False},
        {"language": "en", "name": "English (auto-generated)", "auto_generated": True},
        {"language": "de-DE", "name": "German (Germany)", "auto_generated": False},  # runs
    ]}


def test_captions_none_without_the_key_unknown_when_unreadable() -> None:
    assert asdict(extract("no_captions").captions) == {"status": "none", "tracks": []}
    assert asdict(extract("hidden_likes").captions) == {"status": "unknown", "tracks": []}


def test_related_videos_in_both_forms() -> None:
    related = [asdict(video) for video in extract("public").related_videos]
    assert related == [
        {"video_id": "rElAtEd_c01", "url": "https://www.youtube.com/watch?v=rElAtEd_c01",
         "title": "if (a) { b(); }; // tricky", "channel": "Regex Rangers",
         "duration_seconds": 596},
        {"video_id": "rElAtEd_l01", "url": "https://www.youtube.com/watch?v=rElAtEd_l01",
         "title": "Lockup video with a badge", "channel": "Lockup Channel",
         "duration_seconds": 3723},
        {"video_id": "rElAtEd_c02", "url": "https://www.youtube.com/watch?v=rElAtEd_c02",
         "title": "Live now: parsing marathon", "channel": "Regex Rangers",
         "duration_seconds": None},  # live: no length
        {"video_id": "rElAtEd_l02", "url": "https://www.youtube.com/watch?v=rElAtEd_l02",
         "title": "Newer overlay form", "channel": "Overlay Channel", "duration_seconds": 754},
        {"video_id": "rElAtEd_l03", "url": "https://www.youtube.com/watch?v=rElAtEd_l03",
         "title": "Lockup without a channel row", "channel": None, "duration_seconds": 45},
    ]  # playlist and mix lockups, the radio, the video itself and the duplicate are skipped


def test_related_videos_inside_a_chips_section() -> None:
    related = extract("old_likes").related_videos
    assert [(v.video_id, v.channel, v.duration_seconds) for v in related] == [
        ("oLdReLaTeD1", "Old Oven", 3723), ("oLdReLaTeD2", "Crumb Shot", 245)]
    assert extract("no_captions").related_videos == []  # no side column


def test_related_videos_are_capped() -> None:
    items = [{"compactVideoRenderer": {"videoId": f"rel{n:08d}", "title": {"simpleText": f"#{n}"},
                                       "lengthText": {"simpleText": "1:00"}}} for n in range(30)]
    data = {"contents": {"twoColumnWatchNextResults": {"secondaryResults": {
        "secondaryResults": {"results": items}}}}}
    video = extract_video(fetched("https://www.youtube.com/watch?v=pUbLiC_vid1",
                          player_page(public_player(), data)))
    assert len(video.related_videos) == MAX_RELATED == 20
    assert video.related_videos[-1].title == "#19"


def test_live_video() -> None:
    video = extract("live")
    assert video.is_live is True
    assert video.duration_seconds is None  # lengthSeconds "0"
    assert video.published_at == "2024-05-01T14:00:00Z"  # 07:00-07:00 in UTC
    assert video.engagement.likes == 3456


def test_past_live_stream_is_not_live() -> None:
    player = public_player()
    player["videoDetails"]["isLiveContent"] = True  # the recording of a finished stream
    video = extract_video(fetched(watch_url("pUbLiC_vid1"), player_page(player)))
    assert video.is_live is False
    assert video.duration_seconds == 213


def test_plain_date_is_kept_as_a_date() -> None:
    assert extract("old_likes").published_at == "2019-06-02"


def test_page_without_initial_data_still_gives_the_player_fields() -> None:
    video = extract_video(fetched(watch_url("pUbLiC_vid1"), player_page(public_player())))
    assert video.title == "Build a JSON parser {part 1}; no regex};"
    assert asdict(video.engagement) == {"views": 1523000, "likes": None, "comments": None}
    assert video.related_videos == []


def test_objects_are_decoded_not_matched() -> None:
    html = page("public")
    assert '"ytInitialPlayerResponse = {pending};"' in html  # a decoy before the real one
    assert 'var ytp = {a: 1, b: {c: "};"}};' in html  # code with "};" after the object
    assert (player_response(html) or {})["videoDetails"]["videoId"] == "pUbLiC_vid1"
    tricky = ('<script>var ytInitialData = {};</script>'  # no "contents": not the page's
              '<script>var ytInitialData = {"contents": {"s": "};{"}, "n": [1, {"x": "}"}]};'
              'var later = {"contents": 2};</script>')
    assert initial_data(tricky) == {"contents": {"s": "};{"}, "n": [1, {"x": "}"}]}
    assert initial_data('<script>var ytInitialData = {"contents": 1</script>') is None
    assert player_response("<html><body>No scripts here</body></html>") is None


# --- unavailable videos ---------------------------------------------------------------------


@pytest.mark.parametrize(("state", "message"), [
    ("private", "Video privateVid1 is unavailable: This video is private (status LOGIN_REQUIRED)."),
    ("not_embeddable", "Video noEmbed_v01 is unavailable: its owner does not allow embedding."),
    ("deleted", "Video deletedVid1 is unavailable: This video isn't available anymore "
                "(status ERROR)."),
])
def test_unavailable_pages_raise(state: str, message: str) -> None:
    with pytest.raises(VideoUnavailable) as raised:
        extract(state)
    assert raised.value.message == message
    assert raised.value.url == watch_url(VIDEO_IDS[state], FAKE_BASE)
    assert raised.value.code == "video_unavailable"
    assert isinstance(raised.value, CrawlError)


@pytest.mark.parametrize(("playability", "why"), [
    ({"status": "UNPLAYABLE", "reason": "Video unavailable."},
     "Video unavailable (status UNPLAYABLE)"),
    ({"status": "LOGIN_REQUIRED", "reason": "Sign in to confirm your age"},
     "Sign in to confirm your age (status LOGIN_REQUIRED)"),
    ({"status": "AGE_CHECK_REQUIRED"}, "status AGE_CHECK_REQUIRED"),
    ({"status": "LIVE_STREAM_OFFLINE", "reason": {"simpleText": "Premieres in 2 hours"}},
     "Premieres in 2 hours (status LIVE_STREAM_OFFLINE)"),
    ({"playableInEmbed": True}, "status missing"),
])
def test_only_status_ok_passes(playability: dict[str, Any], why: str) -> None:
    player = {**public_player(), "playabilityStatus": playability}
    with pytest.raises(VideoUnavailable, match=re.escape(f"pUbLiC_vid1 is unavailable: {why}.")):
        extract_video(fetched(watch_url("pUbLiC_vid1"), player_page(player)))


def test_private_flag_alone_is_enough() -> None:
    player = public_player()
    player["videoDetails"]["isPrivate"] = True  # status OK, as its owner would see it
    with pytest.raises(VideoUnavailable, match="is unavailable: it is private"):
        extract_video(fetched(watch_url("pUbLiC_vid1"), player_page(player)))


def test_page_without_player_response_is_a_fetch_failure_not_a_verdict() -> None:
    html = "<html><body><form action='https://consent.youtube.com/save'></form></body></html>"
    with pytest.raises(FetchFailed, match="carries no player data") as raised:
        extract_video(fetched(watch_url("pUbLiC_vid1"), html))
    assert not isinstance(raised.value, VideoUnavailable)


def test_page_of_another_video_raises() -> None:
    with pytest.raises(VideoUnavailable,
                       match="otherVideo1 is unavailable: the watch page describes video "
                             "pUbLiC_vid1 instead"):
        extract_video(fetched(watch_url("otherVideo1"), page("public")), video_id="otherVideo1")
    player = {key: value for key, value in public_player().items() if key != "videoDetails"}
    with pytest.raises(VideoUnavailable, match="the watch page describes no video"):
        extract_video(fetched(watch_url("pUbLiC_vid1"), player_page(player)))


def test_requested_id_comes_from_the_url_when_not_given() -> None:
    video = extract_video(fetched(f"{FAKE_BASE}/watch?v=pUbLiC_vid1", page("public")))
    assert video.video_id == "pUbLiC_vid1"
    with pytest.raises(VideoUnavailable, match="describes video pUbLiC_vid1 instead"):
        extract_video(fetched("https://youtu.be/otherVideo1", page("public")))
    with pytest.raises(ValueError, match="no video id"):
        extract_video(fetched(f"{FAKE_BASE}/results?q=x", page("public")))


# --- the Data API ---------------------------------------------------------------------------


def test_data_api_is_the_source_of_counts_and_flags() -> None:
    video = extract("public")
    before = asdict(copy.deepcopy(video))
    merged = asdict(apply_data_api(video, answer("public")))
    assert asdict(video) == before  # the page's record is not changed
    assert merged["source"] == "data_api"
    assert merged["engagement"] == {"views": 1523480, "likes": 48215, "comments": 1874}
    assert merged["captions"] == before["captions"]  # "true": available, the page's tracks
    assert merged["embeddable"] is True
    unchanged = FIELDS - {"engagement", "source"}
    assert {key: merged[key] for key in unchanged} == {key: before[key] for key in unchanged}


def test_data_api_hidden_counts_stay_null() -> None:
    merged = asdict(apply_data_api(extract("hidden_likes"), answer("hidden_likes")))
    assert merged["engagement"] == {"views": 4321, "likes": None, "comments": None}
    assert merged["captions"] == {"status": "none", "tracks": []}  # caption "false"
    assert merged["source"] == "data_api"
    merged = asdict(apply_data_api(extract("no_captions"), answer("no_captions")))
    assert merged["engagement"]["comments"] == 0  # a real "0" stays 0


def test_data_api_fills_what_the_page_lacked() -> None:
    video = replace(extract("public"), title=None, description=None, published_at=None,
                    duration_seconds=None, thumbnails=[], tags=[],
                    channel=Channel(id=None, name=None, url=None))
    merged = asdict(apply_data_api(video, answer("public")))
    assert merged["title"] == "Build a JSON parser {part 1}; no regex};"
    assert merged["description"].startswith("How to read the JSON")
    assert merged["published_at"] == "2023-03-14T16:30:00Z"
    assert merged["duration_seconds"] == 213  # PT3M33S
    assert merged["channel"] == {"id": "UCpUbLiCcHaNnEl0000000aa", "name": "Parser Lab",
                                 "url": "https://www.youtube.com/channel/UCpUbLiCcHaNnEl0000000aa"}
    assert merged["tags"] == ["json", "parser", "python"]
    assert [(t["width"], t["height"]) for t in merged["thumbnails"]] == [
        (120, 90), (320, 180), (480, 360), (640, 480), (1280, 720)]
    assert merged["thumbnails"][-1]["url"] == "https://i.ytimg.com/vi/pUbLiC_vid1/maxresdefault.jpg"


def test_data_api_keeps_a_live_video_without_duration() -> None:
    merged = asdict(apply_data_api(extract("live"), answer("live")))
    assert merged["is_live"] is True
    assert merged["duration_seconds"] is None  # P0D
    assert merged["engagement"] == {"views": 8800123, "likes": 3460, "comments": None}


def test_caption_flag_false_does_not_hide_automatic_tracks() -> None:
    video = extract("public")
    flagged = answer("public")
    flagged["items"][0]["contentDetails"]["caption"] = "false"  # counts uploaded captions only
    assert apply_data_api(video, flagged).captions == video.captions
    del flagged["items"][0]["contentDetails"]["caption"]
    unknown = replace(video, captions=Captions(status="unknown", tracks=[]))
    assert asdict(apply_data_api(unknown, flagged).captions) == {"status": "unknown",
                                                                  "tracks": []}


@pytest.mark.parametrize(("state", "why"), [
    ("deleted", "the Data API does not list it (private, deleted or unknown)"),
    ("private", "it is private"),
    ("not_embeddable", "its owner does not allow embedding"),
])
def test_data_api_unavailable_answers_raise(state: str, why: str) -> None:
    video_id = VIDEO_IDS[state]
    video = replace(extract("public"), video_id=video_id, url=watch_url(video_id))
    with pytest.raises(VideoUnavailable) as raised:
        apply_data_api(video, answer(state))
    assert raised.value.message == f"Video {video_id} is unavailable: {why}."
    assert raised.value.url == watch_url(video_id)


def test_data_api_answer_about_another_video_raises() -> None:
    with pytest.raises(VideoUnavailable, match="does not list it"):
        apply_data_api(extract("public"), answer("old_likes"))


def test_data_api_engagement() -> None:
    assert asdict(data_api_engagement(answer("public")["items"][0])) == {
        "views": 1523480, "likes": 48215, "comments": 1874}
    assert asdict(data_api_engagement({"statistics": {"viewCount": "10"}})) == {
        "views": 10, "likes": None, "comments": None}
    assert data_api_engagement({"id": "x"}) == Engagement(views=None, likes=None, comments=None)
    assert asdict(data_api_engagement({"statistics": {"viewCount": "0", "likeCount": 5}})) == {
        "views": 0, "likes": 5, "comments": None}


def test_data_api_videos_url() -> None:
    url = data_api_videos_url("https://www.googleapis.com/youtube/v3",
                              ["pUbLiC_vid1", "oLdLikes-01"], "k&y=1 2")
    assert url.startswith("https://www.googleapis.com/youtube/v3/videos?")
    assert "part=snippet,statistics,contentDetails,status&id=pUbLiC_vid1,oLdLikes-01" in url
    assert parse_qs(urlsplit(url).query) == {
        "part": ["snippet,statistics,contentDetails,status"],
        "id": ["pUbLiC_vid1,oLdLikes-01"], "key": ["k&y=1 2"]}  # the key is encoded
    assert data_api_videos_url(f"{FAKE_BASE}/youtube/v3/", ["pUbLiC_vid1"]) == (
        f"{FAKE_BASE}/youtube/v3/videos?part=snippet,statistics,contentDetails,status"
        "&id=pUbLiC_vid1")  # no key: sent as a header instead
    assert data_api_videos_url("", ["pUbLiC_vid1"], "k").startswith(
        "https://www.googleapis.com/youtube/v3/videos?")
    with pytest.raises(ValueError, match="1 to 50 ids"):
        data_api_videos_url("", [], "k")
    with pytest.raises(ValueError, match="1 to 50 ids"):
        data_api_videos_url("", ["pUbLiC_vid1"] * 51, "k")


@pytest.mark.parametrize("state", PLAYABLE)
def test_every_playable_fixture_gives_a_complete_record(state: str) -> None:
    for item in (extract(state), apply_data_api(extract(state), answer(state))):
        video = asdict(item)
        assert set(video) == FIELDS
        assert set(video["engagement"]) == {"views", "likes", "comments"}
        assert set(video["channel"]) == {"id", "name", "url"}
        assert video["title"] and video["channel"]["id"] and video["url"]
        assert video["captions"]["status"] in {"available", "none", "unknown"}
        assert all(value != "" for value in video.values())
