"""Pages for the page cache's tests (``/cache/…``): one with validators that answers 304 to a
matching conditional request, one a shared cache may not keep, one whose content a test
changes. ``<tag>`` in ``/cache/etag/<tag>`` keeps each test's pages apart (the cache is
shared by every test of a session); the server counts requests by path, and 304s here."""

from __future__ import annotations

from collections import Counter
from typing import Any

ETAG = '"v1"'
LAST_MODIFIED = "Wed, 25 Nov 2026 10:00:00 GMT"
#: ``/cache/etag/<tag>`` answered 304, by path.
NOT_MODIFIED: Counter[str] = Counter()
#: Text of ``/cache/changing/<tag>`` pages, by path (a test sets it).
TEXTS: dict[str, str] = {}


def page(title: str, text: str) -> bytes:
    return (f"<!doctype html><html lang=en><head><title>{title}</title></head><body><article>"
            f"<h1>{title}</h1><p>{text} " + "Words of the page, enough to be content. " * 12
            + "</p></article></body></html>").encode()


def _with_validators(h: Any) -> None:
    path = h.path.split("?", 1)[0]
    if h.headers.get("If-None-Match") == ETAG or h.headers.get(
            "If-Modified-Since") == LAST_MODIFIED:
        NOT_MODIFIED[path] += 1
        h.send_response(304)
        h.send_header("ETag", ETAG)
        h.end_headers()
        return
    h.send_body(page("Kept with validators", "Unchanged."),
                headers={"ETag": ETAG, "Last-Modified": LAST_MODIFIED,
                         "Cache-Control": "public, max-age=60"})


def _no_store(h: Any) -> None:
    h.send_body(page("Not for a shared cache", "Personal."),
                headers={"Cache-Control": "private, no-store"})


def _changing(h: Any) -> None:
    path = h.path.split("?", 1)[0]
    h.send_body(page("Changing", TEXTS.get(path, "First version.")))


PREFIXES = {"/cache/etag/": _with_validators, "/cache/no-store/": _no_store,
            "/cache/changing/": _changing}


def route(path: str) -> Any:
    """The handler of ``path`` if it is one of these pages."""
    return next((handler for prefix, handler in PREFIXES.items() if path.startswith(prefix)),
                None)
