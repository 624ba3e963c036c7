"""A fake of the video platform on the test website: watch pages and the Data API.

``GET /watch?v=ID`` serves ``tests/fixtures/video/<state>.html`` (a consent wall for
:data:`CONSENT_WALL`) and
``GET /youtube/v3/videos?id=ID`` serves ``<state>.json``, the state being looked up by video id
in the fixtures' README table. The Data API side answers like Google's: 400 ``API_KEY_INVALID``
without the right key (header ``X-Goog-Api-Key`` or ``key=``), 403 ``quotaExceeded`` for the
ids in :data:`QUOTA_EXCEEDED`, ``items: []`` for unknown ids.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

if TYPE_CHECKING:
    from tests.support.site.server import Handler

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "video"
API_KEY = "test-data-api-key"
#: The Data API answers these with its quota error (the old_likes video).
QUOTA_EXCEEDED = {"oLdLikes-01"}
#: The watch page of this id is a consent wall: no player data at all.
CONSENT_WALL = "cOnSeNtWall"
_CONSENT_PAGE = (b"<!DOCTYPE html><html><head><title>Before you continue to YouTube</title></head>"
                 b"<body><form action='https://consent.youtube.com/save' method='POST'>"
                 b"<button>Accept all</button></form></body></html>")
_ROW = re.compile(r"^\| `(\w+)` \| `([\w-]{11})` \|", re.MULTILINE)


@functools.cache
def states() -> dict[str, str]:
    """Video id → fixture state, from the README's table."""
    return {vid: state for state, vid in _ROW.findall((FIXTURES / "README.md").read_text())}


def _query(h: Handler) -> dict[str, list[str]]:
    return parse_qs(urlsplit(h.path).query)


def watch(h: Handler) -> None:
    video_id = (_query(h).get("v") or [""])[0]
    if video_id == CONSENT_WALL:
        h.send_body(_CONSENT_PAGE)
        return
    state = states().get(video_id)
    if state is None:  # the platform answers 200 with an error page; an unknown id is "deleted"
        state = "deleted"
    h.send_body((FIXTURES / f"{state}.html").read_bytes())


def _google_error(h: Handler, status: int, message: str, reason: str, domain: str) -> None:
    body = {"error": {"code": status, "message": message,
                      "errors": [{"message": message, "domain": domain, "reason": reason}]}}
    h.send_body(json.dumps(body).encode(), "application/json; charset=UTF-8", status=status)


def videos(h: Handler) -> None:
    query = _query(h)
    key = h.headers.get("X-Goog-Api-Key") or (query.get("key") or [""])[0]
    if key != API_KEY:
        _google_error(h, 400, "API key not valid. Please pass a valid API key.",
                      "API_KEY_INVALID", "global")
        return
    ids = [i for value in query.get("id", []) for i in value.split(",") if i]
    if QUOTA_EXCEEDED & set(ids):
        _google_error(h, 403, "The request cannot be completed because you have exceeded your "
                      "quota.", "quotaExceeded", "youtube.quota")
        return
    items = []
    for vid in ids:
        if vid in states():
            answer = json.loads((FIXTURES / f"{states()[vid]}.json").read_text())
            items.extend(answer.get("items", []))
    body = {"kind": "youtube#videoListResponse", "items": items,
            "pageInfo": {"totalResults": len(items), "resultsPerPage": len(items)}}
    h.send_body(json.dumps(body).encode(), "application/json; charset=UTF-8")


ROUTES = {"/watch": watch, "/youtube/v3/videos": videos}
