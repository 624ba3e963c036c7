"""Read the JSON a YouTube watch page carries in its scripts, and walk ``ytInitialData``.

The watch page is rendered on the server: ``var ytInitialPlayerResponse = {…};`` holds the
video's metadata and playability, ``var ytInitialData = {…};`` (or ``window["ytInitialData"] =
{…};``) the rendered page: buttons, related videos. YouTube renames its renderers every few
months, so the walkers here look for a renderer wherever it sits below a stable anchor rather
than at one fixed path, and know both the older ``*Renderer`` and the newer ``*ViewModel``
shapes. Related videos come out as the answer's own items; :mod:`crawler.extract.video`
builds the rest of the record from the objects found here.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterator
from typing import Any

from core.formats import dig
from core.items.video import RelatedVideo
from core.numbers import parse_count, parse_duration
from core.video_platform import VIDEO_ID, watch_url
from crawler.extract.structured import clean

logger = logging.getLogger(__name__)

# Each assignment up to its opening brace; raw_decode reads the object from there.
_PLAYER_RESPONSE = re.compile(r"\bytInitialPlayerResponse\s*=\s*(?=\{)")
_INITIAL_DATA = re.compile(r"""(?:\bytInitialData|\[\s*["']ytInitialData["']\s*\])\s*=\s*(?=\{)""")
_DECODER = json.JSONDecoder()
# "1,234 likes", "like this video along with 1,234 other people"; not "56 dislikes"
_LIKE_LABEL = re.compile(r"(?<![a-z])like", re.IGNORECASE)
_LABEL_KEYS = frozenset({"accessibilityText", "label"})
_VIDEO_LOCKUP = "LOCKUP_CONTENT_TYPE_VIDEO"
_RELATED_PATH = ("contents", "twoColumnWatchNextResults", "secondaryResults", "secondaryResults",
                 "results")


def player_response(html: str) -> dict[str, Any] | None:
    """``ytInitialPlayerResponse``; None when the page has none (a consent or error page)."""
    return _assigned_object(html, _PLAYER_RESPONSE, "playabilityStatus")


def initial_data(html: str) -> dict[str, Any] | None:
    """``ytInitialData``; None when the page has none."""
    return _assigned_object(html, _INITIAL_DATA, "contents")


def _assigned_object(html: str, assignment: re.Pattern[str], key: str) -> dict[str, Any] | None:
    """The first JSON object assigned by ``assignment`` that has ``key``.

    ``raw_decode`` reads exactly one JSON value and stops where it ends, so neither the ``;``
    and code after the object nor ``};`` and braces inside its strings can cut it short or run
    it on, as a regex up to "};" would. The name also turns up where it is not assigned an
    object (other scripts, strings inside the JSON); such matches fail to decode or lack
    ``key``, and the search moves on to the next one.
    """
    for match in assignment.finditer(html or ""):
        try:
            value, _ = _DECODER.raw_decode(html, match.end())
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict) and key in value:
            return value
    logger.debug("no assigned JSON object with a %r key on the page", key)
    return None




def text(node: Any, *, collapse: bool = True) -> str | None:
    """The string of a YouTube text node: a plain string, ``{"simpleText"}``, ``{"runs":
    [{"text"}…]}`` (joined) or the view models' ``{"content"}``; None when empty.

    ``collapse`` squeezes whitespace (titles, names); descriptions keep their line breaks.
    """
    if isinstance(node, dict):
        runs = node.get("runs")
        if isinstance(runs, list):
            node = "".join(run["text"] for run in runs
                           if isinstance(run, dict) and isinstance(run.get("text"), str))
        else:
            node = node.get("simpleText", node.get("content"))
    if not isinstance(node, str):
        return None
    return clean(node) if collapse else node.strip() or None


def _children(node: Any) -> Iterator[tuple[str | None, Any]]:
    if isinstance(node, dict):
        yield from node.items()
    elif isinstance(node, list):
        yield from ((None, item) for item in node)


def _entries(node: Any, skip: Callable[[str], bool] | None = None
             ) -> Iterator[tuple[str, Any]]:
    """Every (key, value) of every object inside ``node``, depth first in document order,
    leaving out the subtrees under keys ``skip`` refuses.

    Iterative, with a stack of child iterators: a deeply nested page must not hit the
    recursion limit, and callers that stop at the first hit leave the rest unvisited.
    """
    stack = [_children(node)]
    while stack:
        for key, value in stack[-1]:
            if key is not None:
                if skip is not None and skip(key):
                    continue
                yield key, value
            stack.append(_children(value))
            break
        else:
            stack.pop()


def _values(node: Any, key: str) -> Iterator[Any]:
    """Every value stored under ``key`` anywhere inside ``node``, in document order."""
    return (value for name, value in _entries(node) if name == key)


def _untoggled(key: str) -> bool:
    """Skip ``toggled*`` states: they show the count as it would be after the viewer's click."""
    return key.startswith("toggled")


def like_count(data: dict[str, Any] | None) -> int | None:
    """The exact like count from the like button's accessibility label; None when hidden.

    Only the action buttons of the primary info renderer (the bar under the player) are read,
    wherever that renderer sits, so that no other number on the page passes for likes. Their
    labels come in two shapes: "like this video along with 1,234 other people" (newer
    ``segmentedLikeDislikeButtonViewModel``) and "1,234 likes" (older ``toggleButtonRenderer``).
    The visible "1.2K" is abbreviated and never used; a hidden count leaves a label without
    digits ("I like this").
    """
    for renderer in _values((data or {}).get("contents"), "videoPrimaryInfoRenderer"):
        for name, label in _entries(dig(renderer, "videoActions"), _untoggled):
            if name in _LABEL_KEYS and isinstance(label, str) and _LIKE_LABEL.search(label):
                count = parse_count(label)
                if count is not None:
                    return count
    return None


def related_videos(data: dict[str, Any] | None) -> Iterator[RelatedVideo]:
    """The related videos of the watch page's side column, in page order (repeats included).

    Items sit in the column directly or, on pages with filter chips, inside an
    ``itemSectionRenderer``. Playlists, mixes, shelves and continuations are skipped, as are
    items without a valid video id.
    """
    for item in _column_items(dig(data, *_RELATED_PATH)):
        if "compactVideoRenderer" in item:
            video = _compact_video(item["compactVideoRenderer"])
        elif "lockupViewModel" in item:
            video = _lockup_video(item["lockupViewModel"])
        else:
            continue
        if video is not None:
            yield video


def _column_items(results: Any) -> Iterator[dict[str, Any]]:
    for item in results if isinstance(results, list) else []:
        section = dig(item, "itemSectionRenderer", "contents")
        yield from (entry for entry in (section if isinstance(section, list) else [item])
                    if isinstance(entry, dict))


def _related_video(video_id: Any, *, title: str | None, channel: str | None,
                   duration_seconds: int | None) -> RelatedVideo | None:
    """The item, with its canonical URL; None unless ``video_id`` is a valid id."""
    if not (isinstance(video_id, str) and VIDEO_ID.fullmatch(video_id)):
        return None
    return RelatedVideo(video_id=video_id, url=watch_url(video_id), title=title,
                        channel=channel, duration_seconds=duration_seconds)


def _compact_video(renderer: Any) -> RelatedVideo | None:
    """The older item: a live stream has no ``lengthText``, so its duration stays None."""
    return _related_video(
        dig(renderer, "videoId"),
        title=text(dig(renderer, "title")),
        channel=text(dig(renderer, "shortBylineText")) or text(dig(renderer, "longBylineText")),
        duration_seconds=parse_duration(text(dig(renderer, "lengthText"))),
    )


def _lockup_video(lockup: Any) -> RelatedVideo | None:
    """The newer item, for videos only (``contentType``; playlists and mixes are lockups too).

    The channel is the first part of the first metadata row when there is a second row (the
    views and age); a single row is views and age alone. The duration is the first thumbnail
    badge that reads as one ("9:56"; a "LIVE" badge does not).
    """
    if dig(lockup, "contentType") != _VIDEO_LOCKUP:
        return None
    metadata = dig(lockup, "metadata", "lockupMetadataViewModel")
    rows = dig(metadata, "metadata", "contentMetadataViewModel", "metadataRows")
    channel = (text(dig(rows, 0, "metadataParts", 0, "text"))
               if isinstance(rows, list) and len(rows) > 1 else None)
    badges = (dig(badge, "text") for badge in _values(dig(lockup, "contentImage"),
                                                       "thumbnailBadgeViewModel"))
    return _related_video(
        dig(lockup, "contentId"),
        title=text(dig(metadata, "title")),
        channel=channel,
        duration_seconds=next(filter(None, map(parse_duration, badges)), None),
    )
