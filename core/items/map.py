"""The map operation's answer (``POST /map``, ``scrapy crawl map``): a site's URLs, not fetched."""

from __future__ import annotations

from dataclasses import dataclass

from core.items.fields import described


@dataclass(kw_only=True, slots=True)  # a map holds up to 100,000 of them
class MapLink:
    url: str = described("The URL in its canonical form (as a crawl admits it); each once.")
    title: str | None = described("A link's text or a feed entry's title; null when no "
                                  "source gave one.", default=None)
    lastmod: str | None = described("The sitemap's `<lastmod>` (or a feed entry's date), as "
                                    "written; null when none.", default=None)
    source: str = described("Where it was first found: sitemap, feed or page.")


@dataclass(kw_only=True)
class SiteMap:
    """The URLs of one site its sitemaps, feeds and links name."""

    links: list[MapLink] = described("At most `limit` URLs: in the order found, or best "
                                     "matches first with `search`.", factory=list)
    sitemaps: list[str] = described("The sitemaps read (indexes too).", factory=list)
    feeds: list[str] = described("The RSS and Atom feeds read.", factory=list)
    total_found: int = described("Distinct URLs found (matching `search`, when given), "
                                 "before `limit`.", default=0)
    truncated: bool = described("Whether more was found (or left unread: the loc cap, the "
                                "deadline) than `links` lists.", default=False)
