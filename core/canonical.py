"""URL canonicalisation and site identity for crawl frontiers.

A crawl admits a page once however it is linked: ``/a?b=2&a=1#top``, ``/a?a=1&b=2`` and
``/a?a=1&b=2&utm_source=mail`` are one page, so the frontier's seen-set and the per-page charge
key are both taken on :func:`canonical_url`. "Stays on the start URL's host" is decided with
:func:`site_key`, where ``www.example.com`` and ``example.com`` are one site (users complain
about crawls that either stop at the ``www.`` redirect or fetch every page twice).

Pure functions, no Scrapy: the API, the frontier and the spiders share them. Input comes from
pages (any href), so nothing here raises.
"""

from __future__ import annotations

import logging
from urllib.parse import SplitResult, unquote, urlsplit, urlunsplit

from w3lib.url import canonicalize_url

from core.policy import ALLOWED_SCHEMES, ascii_url

logger = logging.getLogger(__name__)

#: Port each scheme uses when a URL names none; a URL naming it explicitly is the same URL.
DEFAULT_PORTS = {"http": 80, "https": 443}

#: Query parameters that only tell analytics where a click came from: the page is the same
#: without them. Names are compared case-insensitively; every ``utm_*`` name counts too
#: (:data:`TRACKING_PREFIXES`). Google Ads (``gclid``, ``gclsrc``, ``dclid``, ``gbraid``,
#: ``wbraid``), Facebook (``fbclid``), Microsoft Ads (``msclkid``), Yandex (``yclid``),
#: Mailchimp (``mc_cid``, ``mc_eid``), Google Analytics cross-domain linking (``_ga``, ``_gl``),
#: HubSpot (``_hsenc``, ``_hsmi``), Instagram (``igshid``), Twitter/X (``twclid``),
#: TikTok (``ttclid``), Marketo (``mkt_tok``).
TRACKING_PARAMETERS = frozenset({
    "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "fbclid", "msclkid", "yclid",
    "mc_cid", "mc_eid", "_ga", "_gl", "_hsenc", "_hsmi", "igshid", "twclid", "ttclid",
    "mkt_tok",
})
#: Query parameter name prefixes dropped whatever follows (``utm_source``, ``utm_medium``, …).
TRACKING_PREFIXES = ("utm_",)


def canonical_url(url: str) -> str:
    """The one spelling of ``url`` a crawl frontier admits and remembers.

    w3lib's ``canonicalize_url`` (query arguments sorted, percent-encoding normalised, fragment
    removed, scheme and host lower-cased, empty path made ``/``), then: an international host
    in its IDNA 2008 punycode form (w3lib alone would turn ``faß.de`` into ``fass.de``, another
    domain, see :func:`core.policy.ascii_url`), the scheme's default port dropped, and
    tracking parameters (:data:`TRACKING_PARAMETERS`, ``utm_*``) dropped.

    Only http(s) URLs with a host are canonicalised; anything else (relative, ``mailto:``,
    unparsable, a port out of range) comes back as given, stripped of surrounding whitespace,
    for the caller to refuse: a frontier never admits it.
    """
    stripped = url.strip() if isinstance(url, str) else ""
    try:
        parts = urlsplit(canonicalize_url(ascii_url(stripped)))
        scheme, host, port = parts.scheme.lower(), parts.hostname, parts.port
    except (ValueError, UnicodeError):
        return stripped
    if scheme not in ALLOWED_SCHEMES or not host:
        return stripped
    return urlunsplit(SplitResult(
        scheme=scheme,
        netloc=_netloc(parts, host, None if port == DEFAULT_PORTS[scheme] else port),
        path=parts.path or "/",
        query=_without_tracking(parts.query),
        fragment="",
    ))


def site_key(url: str) -> str:
    """The site ``url`` belongs to: its lower-case host without one leading ``www.``, plus
    ``:port`` when the port is not the scheme's default; ``""`` when ``url`` is not an
    http(s) URL with a host (such a URL belongs to no site, not even its own).

    ``http://www.example.com/`` and ``https://example.com/`` are one site (``example.com``);
    ``blog.example.com`` and ``example.com:8080`` are others. The scheme is not part of it: a
    site that moves to https is still the same site.
    """
    try:
        parts = urlsplit(ascii_url(url.strip()))
        host, port = (parts.hostname or "").removesuffix("."), parts.port
    except (ValueError, UnicodeError, AttributeError):
        return ""
    if not host or parts.scheme.lower() not in ALLOWED_SCHEMES:
        return ""
    host = host.removeprefix("www.")
    if port is None or port == DEFAULT_PORTS.get(parts.scheme.lower()):
        return _bracketed(host)
    return f"{_bracketed(host)}:{port}"


def canonical_site_key(parts: SplitResult) -> str:
    """:func:`site_key` of a URL already in its canonical form, from its split parts: its host
    is ASCII and lower-case and a default port is gone already, so nothing is parsed again
    (a map of 50,000 URLs asks this of each)."""
    host = (parts.hostname or "").removesuffix(".")
    if not host or parts.scheme not in ALLOWED_SCHEMES:
        return ""
    host = _bracketed(host.removeprefix("www."))
    try:
        port = parts.port
    except ValueError:
        return ""
    return host if port is None else f"{host}:{port}"


def same_site(url: str, other: str) -> bool:
    """Whether both URLs belong to one site (:func:`site_key`); never for host-less URLs."""
    key = site_key(url)
    return bool(key) and key == site_key(other)


def is_tracking_parameter(name: str) -> bool:
    """Whether a query parameter (raw, possibly percent-encoded) only serves tracking."""
    name = unquote(name).lower()
    return name in TRACKING_PARAMETERS or name.startswith(TRACKING_PREFIXES)


def _without_tracking(query: str) -> str:
    # Raw pairs, not parse_qsl + urlencode: w3lib has already encoded them once, canonically.
    return "&".join(pair for pair in query.split("&")
                    if pair and not is_tracking_parameter(pair.split("=", 1)[0]))


def _netloc(parts: SplitResult, host: str, port: int | None) -> str:
    userinfo, at, _ = parts.netloc.rpartition("@")
    return f"{userinfo}{at}{_bracketed(host)}{'' if port is None else f':{port}'}"


def _bracketed(host: str) -> str:
    """IPv6 literals keep their brackets (``urlsplit().hostname`` strips them)."""
    return f"[{host}]" if ":" in host else host
