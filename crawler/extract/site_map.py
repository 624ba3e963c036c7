"""What a map keeps of the URLs its sources name: one site's, each once, at most ``limit``.

Pure, no network: :class:`MapCollector` takes URLs as the map spider (:mod:`crawler.spiders.map`)
reads them from sitemaps, feeds and pages, and gives the answer (:class:`core.items.map.SiteMap`).

- Kept: http(s) URLs of the start URL's site (``www.`` and the bare host are one,
  :func:`core.canonical.site_key`), or of its subdomains with ``include_subdomains``; whose
  path + query an ``include_paths`` pattern matches (when there are any) and no
  ``exclude_paths`` pattern does (RE2, :mod:`core.patterns`, a crawl's rules).
- Each once, by its :func:`~core.canonical.canonical_url` (the form it is listed in); a URL
  named again fills the title or lastmod its first sighting lacked.
- Memory is bounded: the seen-set holds 64-bit hashes, and records are kept only for the
  first ``limit`` URLs (with ``search``: the first :data:`SEARCH_POOL` matches).
- ``search``: words (letters and digits, case-folded); a URL matches when its path, title or
  lastmod holds one. Score per word: 2 for a whole word of the path, else 1 for a part of it;
  the same for the title; 1 for the lastmod. Best first, ties in the order found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import SplitResult, unquote, urlsplit

from core.canonical import canonical_site_key, canonical_url, site_key
from core.items.map import MapLink, SiteMap
from core.patterns import compile_patterns, search_any
from core.policy import ALLOWED_SCHEMES

#: Matching URLs a search keeps to rank (the largest plan's limit): more are counted only.
SEARCH_POOL = 100_000
#: Words of a search that count (more are ignored).
MAX_SEARCH_WORDS = 20
_WORD = re.compile(r"\w+")


def words(text: str | None) -> list[str]:
    """The case-folded words (letters, digits, underscores) of ``text``."""
    return _WORD.findall(text.casefold()) if text else []


@dataclass(slots=True)
class _Found:
    link: MapLink
    order: int



class MapCollector:
    """The URLs of one map (see the module)."""

    def __init__(self, start_url: str, *, limit: int, search: str | None = None,
                 include_subdomains: bool = False, include_paths: tuple[str, ...] = (),
                 exclude_paths: tuple[str, ...] = ()):
        self.limit = limit
        self.site = site_key(start_url)
        self.include_subdomains = include_subdomains
        self._include = compile_patterns(list(include_paths), "include_paths")
        self._exclude = compile_patterns(list(exclude_paths), "exclude_paths")
        self.search = list(dict.fromkeys(words(search)))[:MAX_SEARCH_WORDS]
        self._keep = SEARCH_POOL if self.search else limit
        self._seen: set[int] = set()
        self._records: dict[str, _Found] = {}
        #: Distinct URLs found (matching ``search`` when given).
        self.total_found = 0

    def of_site(self, url: str, parts: SplitResult | None = None) -> bool:
        """Whether ``url`` (canonical; ``parts`` its split form when at hand) is of the map's
        site (or a subdomain when asked)."""
        key = canonical_site_key(parts) if parts is not None else site_key(url)
        if not key or not self.site:
            return False
        return key == self.site or (self.include_subdomains and key.endswith("." + self.site))

    def admits(self, url: str) -> str | None:
        """The canonical form of ``url`` when the map keeps such URLs, else None."""
        canonical = canonical_url(url)
        try:
            parts = urlsplit(canonical)
        except ValueError:
            return None
        if parts.scheme not in ALLOWED_SCHEMES or "@" in parts.netloc:
            return None
        if not self.of_site(canonical, parts):
            return None
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        if self._include and not search_any(self._include, target):
            return None
        if self._exclude and search_any(self._exclude, target):
            return None
        return canonical

    def add(self, url: str, source: str, title: str | None = None,
            lastmod: str | None = None) -> bool:
        """Take ``url`` as ``source`` named it; whether it is a new URL of the map."""
        canonical = self.admits(url)
        if canonical is None:
            return False
        title = " ".join(title.split())[:500] or None if title else None
        lastmod = lastmod.strip()[:64] or None if lastmod else None
        found = self._records.get(canonical)
        if found is not None:  # named again: fill what the first sighting lacked
            found.link.title = found.link.title or title
            found.link.lastmod = found.link.lastmod or lastmod
            return False
        key = hash(canonical)
        if key in self._seen:
            return False
        link = MapLink(url=canonical, title=title, lastmod=lastmod, source=source)
        if self.search and not self.score(link):
            return False  # not counted as seen: a later source may give it a matching title
        self._seen.add(key)
        self.total_found += 1
        if len(self._records) < self._keep:
            self._records[canonical] = _Found(link, self.total_found)
        return True

    def score(self, link: MapLink) -> int:
        """How well ``link`` matches the search (0: not at all)."""
        path = unquote(urlsplit(link.url).path).casefold()
        path_words, title_words = set(words(path)), set(words(link.title))
        title = (link.title or "").casefold()
        total = 0
        for word in self.search:
            total += 2 if word in path_words else 1 if word in path else 0
            total += 2 if word in title_words else 1 if word in title else 0
            total += 1 if link.lastmod and word in link.lastmod.casefold() else 0
        return total

    @property
    def full(self) -> bool:
        """Whether nothing more could change the answer's links (no search, limit reached);
        URLs are still counted in ``total_found``."""
        return not self.search and len(self._records) >= self.limit

    def answer(self, sitemaps: list[str], feeds: list[str], cut: bool = False) -> SiteMap:
        """The map: at most ``limit`` links; ``cut``: reading stopped early (a cap, the
        deadline), so ``truncated`` whatever the count."""
        found = list(self._records.values())
        if self.search:
            found.sort(key=lambda one: (-self.score(one.link), one.order))
        links = [one.link for one in found[:self.limit]]
        return SiteMap(links=links, sitemaps=sitemaps, feeds=feeds,
                       total_found=self.total_found,
                       truncated=cut or self.total_found > len(links))
