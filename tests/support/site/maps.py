"""The test website's pages for ``POST /map`` (``/map/…``): a start page with links and a feed,
link hops, and a sitemap index (named by robots.txt, ``robots_extra``) of good, gzip, text,
deep, broken, slow, bomb and other-site sitemaps. ``?hit=PORT`` on the index names a sitemap on
127.0.0.1 there (a private address of another host: never to be fetched)."""

from __future__ import annotations

import contextlib
import gzip
import time
import urllib.parse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.support.site.server import Handler

#: What a map of ``/map/start`` lists from each source (paths), with the default options.
FROM_PAGES = ("/map/a", "/map/b", "/map/hop1", "/map/private-link")
FROM_HOPS = ("/map/deep1", "/map/hop2")  # one hop away (discover_links 1)
FROM_SECOND_HOP = ("/map/deep2",)
FROM_FEED = ("/map/post/1", "/map/post/2")
FROM_SITEMAPS = ("/map/tides-2026", "/map/c", "/map/text-1", "/map/text-2",
                 "/map/broken-ok", "/map/deep-sitemap")
NEVER = ("/map/too-deep", "/map/slow-page", "/elsewhere-y")


def _base(h: Handler) -> str:
    return f"http://{h.headers.get('Host', '127.0.0.2')}"


def _html(h: Handler, title: str, body: str, head: str = "") -> None:
    h.send_body(f"<!doctype html><html lang=en><head><title>{title}</title>{head}</head>"
                f"<body><h1>{title}</h1>{body}</body></html>".encode())


def _start(h: Handler) -> None:
    links = ('<a href="/map/a">Alpha tide guide</a> <a href="/map/b">Beta</a> '
             '<a href="/map/hop1">Next</a> <a href="/map/a#again">Alpha again</a> '
             '<a href="http://example.org/x">Away</a> '
             '<a href="/map/private-link?utm_source=x">Private link</a>')
    _html(h, "Map start", links,
          '<link rel="alternate" type="application/rss+xml" href="/map/feed.rss">')


def _hop1(h: Handler) -> None:
    _html(h, "Hop one", '<a href="/map/deep1">Deep one</a> <a href="/map/hop2">Hop two</a>')


def _hop2(h: Handler) -> None:
    _html(h, "Hop two", '<a href="/map/deep2">Deep two</a>')


def _feed(h: Handler) -> None:
    base = _base(h)
    items = "".join(f"<item><title>{title}</title><link>{base}{path}</link>"
                    f"<pubDate>Mon, 0{n} Jun 2026 10:00:00 GMT</pubDate></item>"
                    for n, (path, title) in enumerate(
                        ((FROM_FEED[0], "First tide post"), (FROM_FEED[1], "Second post")), 1))
    h.send_body(f'<?xml version="1.0"?><rss version="2.0"><channel><title>News</title>'
                f"{items}</channel></rss>".encode(), "application/rss+xml")


def _urlset(entries: list[tuple[str, str | None]]) -> bytes:
    body = "".join(f"<url><loc>{loc}</loc>" + (f"<lastmod>{mod}</lastmod>" if mod else "")
                   + "</url>" for loc, mod in entries)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<urlset '
            f'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}</urlset>').encode()


def _index_of(locs: list[str]) -> bytes:
    body = "".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in locs)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex '
            f'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}</sitemapindex>'
            ).encode()


def _index(h: Handler) -> None:
    base = _base(h)
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(h.path).query)
    hit = query.get("hit", ["9"])[0]
    paths = (f"/map/index.xml?hit={hit}", "/map/pages.xml.gz", "/map/bomb.xml.gz",
             "/map/broken.xml", f"/map/others.xml?hit={hit}", "/map/slow.xml",
             "/map/urls.txt", "/map/level1.xml")
    h.send_body(_index_of([f"{base}{path}" for path in paths]
                          + [f"http://127.0.0.1:{hit}/sitemap.xml"]), "application/xml")


def _pages(h: Handler) -> None:
    base = _base(h)
    h.send_body(gzip.compress(_urlset([
        (f"{base}/map/a", "2026-01-02"), (f"{base}/map/tides-2026", "2026-03-04"),
        (f"{base}/map/c", None), ("http://example.org/elsewhere-y", None)])),
        "application/x-gzip")


def _bomb(h: Handler) -> None:
    from tests.support.site.server import gzip_bomb

    h.send_body(gzip_bomb(), "application/x-gzip")


def _broken(h: Handler) -> None:
    base = _base(h)
    h.send_body(f'<?xml version="1.0"?><urlset><url><loc>{base}/map/broken-ok</loc></url>'
                f"<url><lastmod>2026-0<<</url></urlset".encode(), "application/xml")


def _others(h: Handler) -> None:
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(h.path).query)
    hit = query.get("hit", ["9"])[0]
    h.send_body(_urlset([(f"http://127.0.0.1:{hit}/page", None),
                         ("http://example.org/z", None)]), "application/xml")


def _slow(h: Handler) -> None:
    time.sleep(5)  # past the tests' download timeout (3 s)
    with contextlib.suppress(OSError):  # the map gave up on it, as it should
        h.send_body(_urlset([(f"{_base(h)}/map/slow-page", None)]), "application/xml")


def _text(h: Handler) -> None:
    base = _base(h)
    h.send_body(f"{base}/map/text-1\n\n{base}/map/text-2\nhttp://example.org/t\n".encode(),
                "text/plain")


def _level(n: int):
    """level1 → level2 → level3 and level-deep (depth 3: a urlset read, an index not
    followed) → level4 (never read)."""
    def handler(h: Handler) -> None:
        base = _base(h)
        if n == 4:
            body = _urlset([(f"{base}/map/too-deep", None)])
        elif n == 0:
            body = _urlset([(f"{base}/map/deep-sitemap", None)])
        else:
            body = _index_of([f"{base}/map/level{n + 1}.xml"]
                             + ([f"{base}/map/level-deep.xml"] if n == 2 else []))
        h.send_body(body, "application/xml")
    return handler


#: An Atom feed's entries (``/map/atom-start`` names the feed, not the RSS one).
FROM_ATOM = ("/map/atom/1", "/map/atom/2")


def _atom_start(h: Handler) -> None:
    _html(h, "Atom start", "",
          '<link rel="alternate" type="application/atom+xml" href="/map/feed.atom">')


def _atom(h: Handler) -> None:
    base = _base(h)
    entries = "".join(f'<entry><title>Atom entry {n}</title><link href="{base}{path}"/>'
                      f"<updated>2026-06-0{n}T10:00:00Z</updated></entry>"
                      for n, path in enumerate(FROM_ATOM, 1))
    h.send_body(f'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>A'
                f"</title>{entries}</feed>".encode(), "application/atom+xml")


ROUTES = {
    "/map/start": _start,
    "/map/hop1": _hop1,
    "/map/hop2": _hop2,
    "/map/feed.rss": _feed,
    "/map/atom-start": _atom_start,
    "/map/feed.atom": _atom,
    "/map/index.xml": _index,
    "/map/pages.xml.gz": _pages,
    "/map/bomb.xml.gz": _bomb,
    "/map/broken.xml": _broken,
    "/map/others.xml": _others,
    "/map/slow.xml": _slow,
    "/map/urls.txt": _text,
    **{f"/map/level{n}.xml": _level(n) for n in (1, 2, 3, 4)},
    "/map/level-deep.xml": _level(0),
}
