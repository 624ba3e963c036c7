"""A small site under ``/changing/<tag>/`` whose pages change between two crawls of one tag, for
change tracking's tests: a test builds each run's pages (:func:`publish`), and the server
answers them; ``<tag>`` keeps each test's site apart.

A page is its text, its links, and optionally an ETag: a request whose ``If-None-Match`` is
the page's ETag is answered ``304 Not Modified`` (counted in :data:`NOT_MODIFIED`, by path);
a page may also be gone (its status: 404, 410, 500), or answer after ``delay`` seconds.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

PREFIX = "/changing/"


@dataclass(frozen=True)
class Page:
    """One page of a run: its text, the paths it links to, its ETag (None: none); ``status``
    other than 200 answers a short error page; ``delay`` seconds before answering."""

    text: str = ""
    links: tuple[str, ...] = ()
    etag: str | None = None
    status: int = 200
    delay: float = 0.0


#: Each tag's pages as the next request finds them, by path.
SITES: dict[str, dict[str, Page]] = {}
#: 304s answered, by path.
NOT_MODIFIED: Counter[str] = Counter()


def publish(tag: str, pages: dict[str, Page]) -> dict[str, str]:
    """Serve ``pages`` (by name: ``""`` is the tag's index) under ``/changing/<tag>/`` from
    now on; each name's path."""
    paths = {name: f"{PREFIX}{tag}/{name}" for name in pages}
    SITES[tag] = {paths[name]: page for name, page in pages.items()}
    return paths


def html(title: str, text: str, links: tuple[str, ...]) -> bytes:
    items = "".join(f'<li><a href="{href}">{href}</a></li>' for href in links)
    return (f"<!doctype html><html lang=en><head><title>{title}</title></head><body><article>"
            f"<h1>{title}</h1><p>{text} " + "Words of the page, enough to be content. " * 12
            + f"</p><ul>{items}</ul></article></body></html>").encode()


def _answer(h: Any, page: Page, path: str) -> None:
    if page.delay:
        time.sleep(page.delay)
    if page.etag is not None and h.headers.get("If-None-Match") == page.etag:
        NOT_MODIFIED[path] += 1
        h.send_response(304)
        h.send_header("ETag", page.etag)
        h.end_headers()
        return
    if page.status != 200:
        h.send_body(b"<html><body>not here</body></html>", status=page.status)
        return
    h.send_body(html(path, page.text, page.links),
                headers={"ETag": page.etag} if page.etag is not None else None)


def route(path: str) -> Any:
    """The handler of ``path`` if it is a page of a published tag (another is a 404)."""
    if not path.startswith(PREFIX):
        return None
    tag = path[len(PREFIX):].split("/", 1)[0]
    page = SITES.get(tag, {}).get(path)
    if page is None:
        return lambda h: h.send_body(b"<html><body>Not found</body></html>", status=404)
    return lambda h: _answer(h, page, path)
