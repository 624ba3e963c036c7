"""Recognise links to social-media *profiles* (not shares, posts or the platforms' own pages).

Small pure functions used by :mod:`crawler.extract.contacts`. What a platform's profile
looks like, and which of its paths are its own pages (``/login``, ``/intent``, ``/followers``,
``/sharer.php``…), is one table in :mod:`~crawler.extract.social_platforms`; this module
applies it: a link's tab is dropped (``/@acme/videos`` is the channel ``acme``), a lone
reserved segment is refused, and the rest must match a profile shape whole (a post under a
profile is not a profile).

Twitter and X are one platform, named ``x``. A ``/@user`` link on any other host is a
Mastodon-style (fediverse) profile, with the handle ``user@host``, when all of these hold:

* the host is not the page's own site (its author pages) and not in ``_NOT_FEDIVERSE``, the
  services known to use ``/@user`` for their own accounts (Figma, Medium, Product Hunt…);
* and either the page *claims* the account as its own — ``rel="me"`` on the link (the
  fediverse's own verification convention), a structured ``sameAs``, or the ``@user@host``
  handle form in text — or the host looks like a fediverse server: its name contains a
  fediverse word (mastodon.social, fosstodon.org, mstdn.jp, toot.community, chaos.social…)
  or it is one of the large servers whose names do not say so (hachyderm.io…).

So an unknown ``/@user`` link counts only when the page vouches for it, and no claim makes a
known non-fediverse service count.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from urllib.parse import parse_qsl, urlencode, urlsplit

from core.items.contacts import SocialLink
from crawler.extract.domains import registrable_domain, split_host
from crawler.extract.social_platforms import BY_DOMAIN, Platform

logger = logging.getLogger(__name__)

_TEXT_MASTODON = re.compile(r"(?<![\w@/.])@(\w{1,30})@((?:[a-z0-9-]+\.)+[a-z]{2,63})(?![\w.-])",
                            re.IGNORECASE)
_MASTODON_PATH = re.compile(r"/@(?P<handle>\w{1,30})")
# Registrable domains that use /@name for their own accounts: never fediverse servers.
_NOT_FEDIVERSE = frozenset({
    "figma.com", "framer.com", "webflow.com", "producthunt.com", "replit.com",
    "observablehq.com", "stackblitz.com", "glitch.com", "medium.com", "substack.com",
    "hashnode.com", "unsplash.com", "pexels.com", "printables.com", "odysee.com",
    "steemit.com", "hive.blog", "peakd.com",
})
# Words fediverse servers put in their host names, and a whole "social" label
# (chaos.social, social.coop); then large servers whose names say nothing.
_FEDIVERSE_WORDS = re.compile(r"mastodon|mstdn|todon|toot|fedi|pleroma|akkoma|misskey"
                              r"|calckey|firefish|sharkey|gotosocial|pixelfed|(?:^|\.)social(?:\.|$)")
_FEDIVERSE_HOSTS = frozenset({
    "hachyderm.io", "infosec.exchange", "ioc.exchange", "mas.to", "troet.cafe", "pawoo.net",
    "qoto.org", "tech.lgbt", "piaille.fr", "framapiaf.org", "eldritch.cafe",
})
_NON_DIGITS = re.compile(r"\D")
_PLAIN_HOST_PREFIX = re.compile(r"^https://(?:www\.|m\.|mobile\.)")
_TWITTER = re.compile(r"^https://twitter\.com/")


def social_profile(url: str, site: str, claimed: bool = False, *, source_url: str
                   ) -> SocialLink | None:
    """The profile ``url`` (absolute) links to, found on the page ``source_url``; None when
    it is not a profile.

    ``site`` is the page's registrable domain: a ``/@name`` link on the site itself is one of
    its own author pages, not a fediverse account. ``claimed`` says the page declares the
    account its own (``rel="me"``, ``sameAs``): it lets an unknown ``/@name`` host count.
    """
    try:
        parts = urlsplit(url)
        hostname = (parts.hostname or "").rstrip(".")
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not hostname:
        return None
    path = parts.path.rstrip("/")
    domain = registrable_domain(hostname)
    platform = BY_DOMAIN.get(domain)
    if platform is None:
        return _mastodon(hostname, path, domain, site, claimed, source_url)
    subdomain = hostname[: -len(domain)]
    path = _without_tab(platform, path)
    if not platform.subdomains.fullmatch(subdomain) or _reserved(platform, path):
        return None
    query = urlencode([(key, _NON_DIGITS.sub("", value))
                       for key, value in parse_qsl(parts.query) if key in platform.keep_query])
    target = f"{path}?{query}" if query else path
    for pattern, handle in platform.profiles:
        if (match := pattern.fullmatch(target)) is not None:
            return SocialLink(platform=platform.name, url=f"https://{hostname}{target}",
                              handle=handle.format(*match.groups()) if handle else None,
                              source_url=source_url)
    return None


def _without_tab(platform: Platform, path: str) -> str:
    """``/@acme/videos`` → ``/@acme``: a profile's tab is the profile (one level only)."""
    head, _, last = path.rpartition("/")
    return head if head and last.lower() in platform.tabs else path


def _reserved(platform: Platform, path: str) -> bool:
    """Whether a one-segment path names one of the platform's own pages, not an account."""
    segments = path.lstrip("/").split("/")
    return len(segments) == 1 and segments[0].lower() in platform.reserved


def _mastodon(hostname: str, path: str, domain: str, site: str, claimed: bool,
              source_url: str) -> SocialLink | None:
    match = _MASTODON_PATH.fullmatch(path)
    if match is None or domain in _NOT_FEDIVERSE or domain == site or not split_host(
            hostname).suffix:
        return None
    if not claimed and not _looks_fediverse(hostname):
        return None
    user = match.group("handle")
    return SocialLink(platform="mastodon", url=f"https://{hostname}/@{user}",
                      handle=f"{user}@{hostname}", source_url=source_url)


def _looks_fediverse(hostname: str) -> bool:
    """Whether the host's name alone makes it a plausible fediverse server."""
    return bool(_FEDIVERSE_WORDS.search(hostname)) or hostname.removeprefix(
        "www.") in _FEDIVERSE_HOSTS


def mastodon_in_text(text: str, site: str, *, source_url: str
                     ) -> Iterator[tuple[int, int, SocialLink]]:
    """Fediverse handles written as ``@user@host`` in visible text, as profile records with
    their spans. The handle form is itself the claim, as ``rel="me"`` is for a link."""
    for match in _TEXT_MASTODON.finditer(text):
        user, hostname = match.group(1), match.group(2).lower()
        profile = social_profile(f"https://{hostname}/@{user}", site, claimed=True,
                                 source_url=source_url)
        if profile is not None:
            yield match.start(), match.end(), profile


def dedupe_key(profile: SocialLink) -> str:
    """Profiles are the same when their URLs differ only in case, a www./m. prefix, or
    twitter.com for x.com (one platform, two names: ``x`` either way)."""
    key = _PLAIN_HOST_PREFIX.sub("https://", profile.url.lower(), count=1)
    return _TWITTER.sub("https://x.com/", key, count=1)
