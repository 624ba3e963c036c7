"""Split host names into subdomain, registrable domain and public suffix, offline.

Every contact helper needs the same answer: e-mails (is the domain under a real public
suffix?), phones (which country does a ccTLD name?), social links (is this host the page's
own site, a platform, a fediverse server?) and suggested pages (same site?). One bundled
Public Suffix List snapshot and one cache serve them all.
"""

from __future__ import annotations

from functools import lru_cache

import tldextract
from tldextract.tldextract import ExtractResult

# suffix_list_urls=() → the bundled Public Suffix List snapshot, never the network;
# cache_dir=None → nothing written to disk by a pure function.
_TLD_EXTRACT = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


def split_host(name: str) -> ExtractResult:
    """Subdomain, domain and public suffix of a host name (offline, bundled suffix list)."""
    return _split_host(name.lower().rstrip("."))


@lru_cache(maxsize=4096)
def _split_host(name: str) -> ExtractResult:
    return _TLD_EXTRACT(name)


def registrable_domain(name: str) -> str:
    """``example.co.uk`` for ``www.shop.example.co.uk``; the host itself for IPs/localhost."""
    parts = split_host(name)
    return parts.top_domain_under_public_suffix or name.lower()
