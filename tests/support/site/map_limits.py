"""The test website's sitemaps for ``POST /map``'s caps and fallbacks
(tests/test_api_map_limits.py): many entries, a slow sitemap, files past 50 MB,
``/sitemap_index.xml``, and sitemaps naming subdomains and other hosts. Which of them a site's
robots.txt names is the test's choice (``robots_extra``); locations are absolute, built from
the request's ``Host``.

- ``/map/many.xml?from=K&n=N`` (and ``/map/many.txt``, one URL a line): N distinct URLs
  ``/map/many/K`` … ``/map/many/K+N-1``;
- ``/map/early.xml``: :data:`EARLY`, at once; ``/map/late.xml?ms=N``: :data:`LATE`, after N ms;
- ``/map/padded.xml.gz`` and ``/map/padded.xml``: :data:`PADDED` around more than 50 MiB of
  white space (decompressed, for the gzip one): past the protocol's size, the file gives nothing;
- ``/sitemap_index.xml``: an index of ``/map/fallback.xml`` (:data:`FALLBACK`);
- ``/map/sub-index.xml``: an index of itself, ``/map/sub.xml`` and a sitemap on
  :data:`OTHER_HOST` (an index names sitemaps of its own site: never fetched);
  ``/map/sub.xml`` lists URLs of the site (``www.`` too), of its subdomains and of other hosts
  (:data:`SUB_OWN`, :data:`SUB_SUBDOMAINS`, :data:`SUB_OTHERS`: host, path).
"""

from __future__ import annotations

import contextlib
import gzip
import time
import urllib.parse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.support.site.server import Handler

EARLY = ("/map/early-1", "/map/early-2")
LATE = ("/map/late-1",)
PADDED = ("/map/padded-first", "/map/padded-last")
#: More than the 50 MB (MiB) one sitemap may hold, downloaded or decompressed.
PADDING = 50 * 1024 * 1024 + 1
FALLBACK = ("/map/fallback-1", "/map/fallback-2")
#: The site's name, as the test's scripted DNS resolves it (with its subdomains).
SITE_NAME = "mapsite.test"
OTHER_HOST = "other.test"
SUB_OWN = ((SITE_NAME, "/map/sub/own"), (f"www.{SITE_NAME}", "/map/sub/www"))
SUB_SUBDOMAINS = ((f"blog.{SITE_NAME}", "/map/sub/blog"),
                  (f"deep.blog.{SITE_NAME}", "/map/sub/deep-blog"))
SUB_OTHERS = ((OTHER_HOST, "/map/sub/other"), (f"not{SITE_NAME}", "/map/sub/lookalike"))
#: What the sitemap on :data:`OTHER_HOST` would list (the site's own URL: kept, if read).
VIA_OTHER = "/map/sub/via-other"


def _base(h: Handler) -> str:
    return f"http://{h.headers.get('Host', '127.0.0.2')}"


def _query(h: Handler, name: str, default: int) -> int:
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(h.path).query)
    return int(query.get(name, [str(default)])[0])


def urlset(locs: list[str], padding: int = 0) -> bytes:
    entries = [f"<url><loc>{loc}</loc></url>" for loc in locs]
    middle = len(entries) // 2
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<urlset '
            'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            + "".join(entries[:middle])).encode() + b" " * padding + (
            "".join(entries[middle:]) + "</urlset>").encode()


def _index_of(locs: list[str]) -> bytes:
    body = "".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in locs)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex '
            f'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}</sitemapindex>'
            ).encode()


def _many_urls(h: Handler) -> list[str]:
    first, count = _query(h, "from", 0), _query(h, "n", 10)
    return [f"{_base(h)}/map/many/{n}" for n in range(first, first + count)]


def _many(h: Handler) -> None:
    h.send_body(urlset(_many_urls(h)), "application/xml")


def _many_text(h: Handler) -> None:
    h.send_body("".join(f"{url}\n" for url in _many_urls(h)).encode(), "text/plain")


def _early(h: Handler) -> None:
    h.send_body(urlset([_base(h) + path for path in EARLY]), "application/xml")


def _late(h: Handler) -> None:
    time.sleep(_query(h, "ms", 500) / 1000)
    with contextlib.suppress(OSError):  # the map gave up on it, as it should
        h.send_body(urlset([_base(h) + path for path in LATE]), "application/xml")


def _padded_body(h: Handler) -> bytes:
    return urlset([_base(h) + path for path in PADDED], padding=PADDING)


def _padded_gzip(h: Handler) -> None:
    h.send_body(gzip.compress(_padded_body(h), compresslevel=1), "application/x-gzip")


def _padded(h: Handler) -> None:
    with contextlib.suppress(OSError):  # the map stops reading at its size
        h.send_body(_padded_body(h), "application/xml")


def _fallback_index(h: Handler) -> None:
    h.send_body(_index_of([f"{_base(h)}/map/fallback.xml"]), "application/xml")


def _fallback(h: Handler) -> None:
    h.send_body(urlset([_base(h) + path for path in FALLBACK]), "application/xml")


def _port(h: Handler) -> int:
    return h.server.server_address[1]


def _sub_index(h: Handler) -> None:
    base = _base(h)
    h.send_body(_index_of([f"{base}/map/sub-index.xml", f"{base}/map/sub.xml",
                           f"http://{OTHER_HOST}:{_port(h)}/map/other-sitemap.xml"]),
                "application/xml")


def _sub(h: Handler) -> None:
    port = _port(h)
    h.send_body(urlset([f"http://{host}:{port}{path}"
                        for host, path in SUB_OWN + SUB_SUBDOMAINS + SUB_OTHERS]),
                "application/xml")


def _other_sitemap(h: Handler) -> None:
    h.send_body(urlset([f"http://{SITE_NAME}:{_port(h)}{VIA_OTHER}"]), "application/xml")


ROUTES = {
    "/map/many.xml": _many,
    "/map/many.txt": _many_text,
    "/map/early.xml": _early,
    "/map/late.xml": _late,
    "/map/padded.xml.gz": _padded_gzip,
    "/map/padded.xml": _padded,
    "/sitemap_index.xml": _fallback_index,
    "/map/fallback.xml": _fallback,
    "/map/sub-index.xml": _sub_index,
    "/map/sub.xml": _sub,
    "/map/other-sitemap.xml": _other_sitemap,
}
