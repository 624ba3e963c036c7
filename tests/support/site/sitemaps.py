"""The test website's sitemaps: what a crawl with ``use_sitemap`` reads (``sitemap_urls``).

``/robots.txt`` lists ``/sitemap-news.xml``; ``/sitemap.xml`` is an index of a plain sitemap,
a gzip one, itself (a loop) and a missing one. Between them they list :data:`SITE_PAGES` (some
twice, in other spellings) and pages of other sites, which a crawl must drop. Locations are
absolute, as sitemaps.org requires, so they are built from the request's ``Host``.
"""

from __future__ import annotations

import gzip
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.support.site.server import Handler

#: Paths of the site's own pages the sitemaps list between them, each once after
#: canonicalisation (some are listed twice, with a fragment or a tracking parameter).
SITE_PAGES = ("/article", "/contact", "/product", "/nothing", "/news/1", "/news/2")
#: Pages of other sites listed too (another host, another port of this host).
OTHER_SITES = ("http://example.org/elsewhere", "http://127.0.0.2:9/")


def robots_line(h: Handler) -> str:
    return f"Sitemap: {_base(h)}/sitemap-news.xml\n"


def _base(h: Handler) -> str:
    return f"http://{h.headers.get('Host', '127.0.0.2')}"


def _urlset(locs: list[str]) -> bytes:
    entries = "".join(f"<url><loc>{loc}</loc><changefreq>daily</changefreq></url>"
                      for loc in locs)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>'
            ).encode()


def _index(h: Handler) -> None:
    base = _base(h)
    entries = "".join(f"<sitemap><loc>{base}{path}</loc></sitemap>" for path in (
        "/sitemap-pages.xml", "/sitemap-archive.xml.gz", "/sitemap.xml", "/sitemap-gone.xml"))
    body = ('<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex '
            f'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</sitemapindex>')
    h.send_body(body.encode(), "application/xml")


def _pages(h: Handler) -> None:
    base = _base(h)
    locs = [f"{base}/article", f"{base}/contact", OTHER_SITES[0],
            f"{base}/product?utm_source=sitemap"]
    h.send_body(_urlset(locs), "application/xml")


def _archive(h: Handler) -> None:
    """A gzip file (no Content-Encoding): the spider itself has to decompress it."""
    base = _base(h)
    locs = [f"{base}/product", f"{base}/article#top", f"{base}/nothing", OTHER_SITES[1]]
    h.send_body(gzip.compress(_urlset(locs)), "application/x-gzip")


def _news(h: Handler) -> None:
    base = _base(h)
    h.send_body(_urlset([f"{base}/news/1", f"{base}/news/2", f"{base}/article"]),
                "text/xml")


ROUTES = {
    "/sitemap.xml": _index,
    "/sitemap-pages.xml": _pages,
    "/sitemap-archive.xml.gz": _archive,
    "/sitemap-news.xml": _news,
}
