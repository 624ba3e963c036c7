"""A small website under ``/site/`` for crawl tests: known depths, and every kind of duplicate.

Depth from ``/site/`` (link hops), and what each page is:

- 0: ``/site/``
- 1: ``/site/a``, ``/site/b``, ``/site/c``, ``/site/deep/1``, ``/site/print?print=1``;
  ``/site/moved`` (redirects to ``/site/a``: a duplicate found after fetching),
  ``/site/canon`` (``rel=canonical`` to ``/site/c``: the same), ``/private/secret``
  (robots.txt disallows it: skipped, never fetched); and links that are no new page:
  ``/site/a`` with a ``utm_source``, ``/site/b#top``, ``/site/?``, another host, a ``mailto:``
- 2: ``/site/a/1``, ``/site/a/2``, ``/site/b/1``, ``/site/deep/2``
- 3: ``/site/deep/3``; 4: ``/site/deep/4``

So a crawl of depth 1 stores 6 pages (the start and 5 pages) and counts 2 duplicates; depth 4
stores 11.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

PREFIX = "/site/"
#: Each page: the paths it links to (and its rel=canonical, if any).
LINKS: dict[str, list[str]] = {
    "/site/": ["/site/a", "/site/b", "/site/c", "/site/deep/1", "/site/print?print=1",
               "/site/moved", "/site/canon", "/private/secret", "/site/a?utm_source=news",
               "/site/b#top", "/site/", "http://127.0.0.3:9/elsewhere", "mailto:x@example.com"],
    "/site/a": ["/site/a/1", "/site/a/2", "/site/"],
    "/site/b": ["/site/b/1"],
    "/site/c": [],
    "/site/canon": ["/site/a"],
    "/site/print": [],
    "/site/a/1": [], "/site/a/2": [], "/site/b/1": [],
    "/site/deep/1": ["/site/deep/2"], "/site/deep/2": ["/site/deep/3"],
    "/site/deep/3": ["/site/deep/4"], "/site/deep/4": [],
}
CANONICAL = {"/site/canon": "/site/c"}
REDIRECTS = {"/site/moved": "/site/a"}

#: What crawls of ``/site/`` store, by ``max_depth`` (paths of the pages).
STORED = {
    1: {"/site/", "/site/a", "/site/b", "/site/c", "/site/deep/1", "/site/print?print=1"},
}
STORED[2] = STORED[1] | {"/site/a/1", "/site/a/2", "/site/b/1", "/site/deep/2"}
STORED[3] = STORED[2] | {"/site/deep/3"}
STORED[4] = STORED[3] | {"/site/deep/4"}


def page(path: str) -> bytes:
    links = "".join(f'<li><a href="{href}">{href}</a></li>' for href in LINKS[path])
    canonical = CANONICAL.get(path)
    head = f'<link rel="canonical" href="{canonical}">' if canonical else ""
    return (f"<!doctype html><html lang=en><head><title>{path}</title>{head}</head><body>"
            f"<h1>Page {path}</h1><p>{'Words of the page. ' * 20}</p><ul>{links}</ul>"
            "</body></html>").encode()


def route(path: str) -> Callable[[Any], None] | None:
    """The handler of ``path`` (without its query) on the test site, if it is one of ours."""
    if path in REDIRECTS:
        def redirect(h: Any) -> None:
            h.send_response(302)
            h.send_header("Location", REDIRECTS[path])
            h.send_header("Content-Length", "0")
            h.end_headers()
        return redirect
    if path in LINKS:
        return lambda h: h.send_body(page(path))
    return None
