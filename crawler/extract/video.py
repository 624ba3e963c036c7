"""Video metadata for ``POST /video-platform``: link forms, the watch page, the Data API.

Pure functions (no network, no Scrapy). The video spider fetches the watch page and, when a
Data API key is configured, one ``videos.list`` answer: :func:`extract_video` turns the page
into the API's record, a :class:`~core.items.video.Video` built from its nested items where
each is found, and :func:`apply_data_api` lays the Data API's exact figures over it.
Only public, embeddable videos are served; anything else raises :class:`VideoUnavailable`.
Unknown values are None, never 0 or "": a hidden like count is not zero likes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from typing import Any
from urllib.parse import quote, urlsplit

from core.controls import escaped
from core.formats import dig, iso_utc
from core.items.video import (
    Captions,
    CaptionTrack,
    Channel,
    Engagement,
    RelatedVideo,
    Thumbnail,
    Video,
)
from core.numbers import parse_count, parse_duration
from core.video_platform import (
    CANONICAL_BASE,
    data_api_engagement,
    parse_video_url,
    path_video_id,
    watch_url,
)
from crawler.exceptions import FetchFailed, VideoUnavailable
from crawler.extract.fetched import FetchedPage
from crawler.extract.registry import extracts
from crawler.extract.structured import clean, join
from crawler.extract.youtube_page import (
    initial_data,
    like_count,
    player_response,
    related_videos,
    text,
)

logger = logging.getLogger(__name__)

MAX_RELATED = 20

_CAPTION_FLAG = {"true": "available", "false": "none"}


@extracts("video")
def extract_video(page: FetchedPage, *, video_id: str | None = None) -> Video:
    """The API record of the video on a fetched watch page.

    The id asked for is ``video_id`` or, without it, the one the page's URL names (path or
    ``v`` parameter, any host); the page must describe that very video, or a consent page or a
    redirect to another video would pass for it. Only the page's scripts are read: its JSON
    says everything, so no tree is parsed.

    Raises :class:`VideoUnavailable` unless the video is public, playable and embeddable
    (see :func:`_playable`), and ValueError when no id is known at all (a caller's bug).
    """
    url, html = page.address, page.html
    requested = video_id or _url_video_id(url)
    if requested is None:
        raise ValueError(f"no video id given and none in {url!r}")
    player = player_response(html)
    details, micro = _playable(player, requested, url)
    data = initial_data(html)
    if data is None:
        logger.debug("no ytInitialData on %s: likes and related videos unknown", escaped(url))
    # "is currently live": isLiveContent alone also marks the recording of a finished stream
    is_live = details.get("isLive") is True or dig(micro, "liveBroadcastDetails",
                                                   "isLiveNow") is True
    channel_id = clean(details.get("channelId")) or clean(micro.get("externalChannelId"))
    return Video(
        video_id=requested,
        url=watch_url(requested),
        title=text(details.get("title")) or text(micro.get("title")),
        description=(text(details.get("shortDescription"), collapse=False)
                     or text(micro.get("description"), collapse=False)),
        published_at=iso_utc(micro.get("publishDate")) or iso_utc(micro.get("uploadDate")),
        duration_seconds=None if is_live else _first_not_none(
            parse_duration, details.get("lengthSeconds"), micro.get("lengthSeconds")),
        channel=_channel(channel_id,
                         text(details.get("author")) or text(micro.get("ownerChannelName")),
                         micro.get("ownerProfileUrl")),
        thumbnails=_thumbnails(dig(details, "thumbnail", "thumbnails")
                               or dig(micro, "thumbnail", "thumbnails")),
        tags=_tags(details.get("keywords")),
        category=text(micro.get("category")),
        is_live=is_live,
        is_family_safe=_flag(micro.get("isFamilySafe")),
        embeddable=_flag(dig(player, "playabilityStatus", "playableInEmbed")),
        engagement=Engagement(
            views=_first_not_none(parse_count, details.get("viewCount"), micro.get("viewCount")),
            likes=like_count(data),
            comments=None,  # the page only shows an abbreviated count, if any
        ),
        captions=_captions(player),
        related_videos=_related(data, requested),
        source="page",
    )


def _url_video_id(url: str) -> str | None:
    """Any link form of the platform, or a watch path on any host (a local fake)."""
    try:
        return parse_video_url(url) or path_video_id(urlsplit(url))
    except ValueError:
        return None


def _unavailable(video_id: str | None, url: str | None, why: str) -> VideoUnavailable:
    return VideoUnavailable(f"Video {video_id} is unavailable: {why}.", url=url)


def _playable(player: dict[str, Any] | None, video_id: str, url: str
              ) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(videoDetails, playerMicroformatRenderer)`` of a public, embeddable video.

    Only ``playabilityStatus.status == "OK"`` passes: private and age-gated videos
    (LOGIN_REQUIRED, AGE_CHECK_REQUIRED), blocked ones (UNPLAYABLE), deleted or unknown ones
    (ERROR) and upcoming or ended live streams (LIVE_STREAM_OFFLINE) all fail, with YouTube's
    ``reason`` in the message. Then the page must describe ``video_id``, not be private, and not
    refuse embedding; a missing ``playableInEmbed`` is unknown, not a refusal.
    """
    if player is None:  # a consent wall or bot check: a fetch problem worth a retry, not a verdict
        raise FetchFailed(f"The watch page of {video_id} carries no player data (a consent or "
                          "bot-check page?); nothing was charged, try again later.", url=url)
    playability = player.get("playabilityStatus")
    status = dig(playability, "status")
    if status != "OK":
        reason = (text(dig(playability, "reason"))
                  or text(dig(playability, "errorScreen", "playerErrorMessageRenderer", "reason")))
        state = f"status {status or 'missing'}"
        raise _unavailable(video_id, url, f"{reason.rstrip('.')} ({state})" if reason else state)
    details = player.get("videoDetails")
    found = dig(details, "videoId")
    if found != video_id:
        raise _unavailable(video_id, url, f"the watch page describes video {found} instead"
                           if found else "the watch page describes no video")
    if details.get("isPrivate") is True:
        raise _unavailable(video_id, url, "it is private")
    if dig(playability, "playableInEmbed") is False:
        raise _unavailable(video_id, url, "its owner does not allow embedding")
    micro = dig(player, "microformat", "playerMicroformatRenderer")
    return details, micro if isinstance(micro, dict) else {}


def _first_not_none(parse: Callable[[Any], Any], *values: Any) -> Any:
    """The first value ``parse`` can read; a legitimate 0 wins over a later value."""
    return next((parsed for parsed in map(parse, values) if parsed is not None), None)


def _flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None




def _https(href: Any) -> str | None:
    """Absolute and https: YouTube's own hosts all serve https, yet the page still writes some
    URLs as ``http://`` (channel profiles) or protocol-relative (``//i.ytimg.com``)."""
    absolute = join(CANONICAL_BASE, href)
    if absolute and absolute.startswith("http://"):
        return "https://" + absolute[len("http://"):]
    return absolute


def _channel(channel_id: str | None, name: str | None, profile_url: Any) -> Channel:
    fallback = f"{CANONICAL_BASE}/channel/{quote(channel_id)}" if channel_id else None
    return Channel(id=channel_id, name=name, url=_https(profile_url) or fallback)


def _thumbnails(items: Any) -> list[Thumbnail]:
    """The images of a list of ``{"url", "width", "height"}`` objects, absolute, each URL
    once, in the source's order."""
    thumbnails: dict[str, Thumbnail] = {}
    for item in items if isinstance(items, list) else []:
        url = _https(dig(item, "url"))
        if url and url not in thumbnails:
            thumbnails[url] = Thumbnail(url=url, width=parse_count(item.get("width")),
                                        height=parse_count(item.get("height")))
    return list(thumbnails.values())


def _tags(keywords: Any) -> list[str]:
    found = (clean(tag) for tag in (keywords if isinstance(keywords, list) else []))
    return list(dict.fromkeys(filter(None, found)))


def _captions(player: dict[str, Any]) -> Captions:
    """Caption tracks; status ``none`` only when the (playable, so complete) player response has
    no ``captions`` key at all, ``unknown`` when the key is there but lists no readable track."""
    if "captions" not in player:
        return Captions(status="none")
    found = dig(player, "captions", "playerCaptionsTracklistRenderer", "captionTracks")
    tracks = [
        CaptionTrack(language=clean(track["languageCode"]), name=text(track.get("name")),
                     auto_generated=track.get("kind") == "asr")
        for track in (found if isinstance(found, list) else [])
        if isinstance(track, dict) and clean(track.get("languageCode"))
    ]
    return Captions(status="available" if tracks else "unknown", tracks=tracks)


def _related(data: dict[str, Any] | None, video_id: str) -> list[RelatedVideo]:
    """At most :data:`MAX_RELATED` related videos, each once, never the video itself."""
    seen = {video_id}
    related: list[RelatedVideo] = []
    for video in related_videos(data):
        if video.video_id in seen:
            continue
        seen.add(video.video_id)
        related.append(video)
        if len(related) == MAX_RELATED:
            break
    return related


def apply_data_api(video: Video, answer: dict[str, Any]) -> Video:
    """``video`` (from :func:`extract_video`) with a ``videos.list`` answer laid over it.

    The Data API is the source of the counts, the caption flag and embeddability, and
    ``source`` becomes ``"data_api"``; other fields keep the page's values and are only filled
    where the page had none. Returns a new item; ``video`` is left as it was, so a caller can
    still fall back to the page's figures. Raises :class:`VideoUnavailable` when the answer
    does not list the video (private, deleted and unknown ids all give ``items: []``), says it
    is private, or says it cannot be embedded.
    """
    video_id = video.video_id
    items = answer.get("items") if isinstance(answer, dict) else None
    item = next((entry for entry in (items if isinstance(items, list) else [])
                 if dig(entry, "id") == video_id), None)
    if item is None:
        raise _unavailable(video_id, video.url,
                           "the Data API does not list it (private, deleted or unknown)")
    if dig(item, "status", "privacyStatus") == "private":
        raise _unavailable(video_id, video.url, "it is private")
    if dig(item, "status", "embeddable") is False:
        raise _unavailable(video_id, video.url, "its owner does not allow embedding")
    snippet = item.get("snippet") if isinstance(item.get("snippet"), dict) else {}
    is_live = bool(video.is_live) or snippet.get("liveBroadcastContent") == "live"
    channel = video.channel
    sizes = snippet.get("thumbnails")  # {"default": {…}, "medium": {…}, …}, smallest first
    return replace(
        video,
        title=video.title or text(snippet.get("title")),
        description=video.description or text(snippet.get("description"), collapse=False),
        published_at=video.published_at or iso_utc(snippet.get("publishedAt")),
        duration_seconds=None if is_live else (
            video.duration_seconds or parse_duration(dig(item, "contentDetails", "duration"))),
        channel=_channel(channel.id or clean(snippet.get("channelId")),
                         channel.name or text(snippet.get("channelTitle")), channel.url),
        thumbnails=video.thumbnails
        or _thumbnails(list(sizes.values()) if isinstance(sizes, dict) else []),
        tags=video.tags or _tags(snippet.get("tags")),
        is_live=is_live,
        embeddable=_flag(dig(item, "status", "embeddable")) or video.embeddable,
        engagement=data_api_engagement(item),
        captions=_merged_captions(video.captions, dig(item, "contentDetails", "caption")),
        source="data_api",
    )


def _merged_captions(captions: Captions, flag: Any) -> Captions:
    """The Data API's caption flag as status, the page's tracks kept.

    The flag counts uploaded captions only, so "false" with automatic tracks on the page
    stays ``available``: the tracks are there to be read. An absent flag keeps the page's status.
    """
    tracks = list(captions.tracks)
    status = _CAPTION_FLAG.get(flag) if isinstance(flag, str) else None
    if status is None or (status == "none" and tracks):
        status = captions.status or ("available" if tracks else "unknown")
    return Captions(status=status, tracks=tracks)
