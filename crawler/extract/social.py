"""Recognise links to social-media *profiles* (not shares, posts or the platforms' own pages).

Small pure functions used by :mod:`crawler.extract.contacts`. Each platform is a table row:
its registrable domains, the path shapes of a profile (matched whole, so a post or a tab under
a profile is not a profile) and the first path segments it reserves for its own pages
(``/login``, ``/intent``, ``/sharer.php``…). Adding a platform means adding a row.

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
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit

from crawler.extract.domains import registrable_domain, split_host
from crawler.items.contacts import SocialLink

logger = logging.getLogger(__name__)

# The site's own (common) pages, shared by every platform with one-segment profiles.
_COMMON_RESERVED = frozenset({
    "about", "help", "legal", "login", "logout", "policies", "policy", "privacy", "search",
    "settings", "share", "signup", "terms", "tos", "home", "explore", "business", "careers",
    "developers", "jobs", "press", "security", "support", "contact", "pricing", "features",
})
_PLAIN_SUBDOMAINS = re.compile(r"(?:www\.|m\.|mobile\.)?")
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


@dataclass(frozen=True)
class _Platform:
    name: str
    domains: frozenset[str]
    # fullmatch on path (plus the kept query); the handle is formatted from the groups
    profiles: tuple[tuple[re.Pattern[str], str | None], ...]
    reserved: frozenset[str] = frozenset()
    subdomains: re.Pattern[str] = _PLAIN_SUBDOMAINS
    keep_query: frozenset[str] = frozenset()  # numeric identifiers a profile URL needs


def _profile(pattern: str, handle: str | None = "{0}") -> tuple[re.Pattern[str], str | None]:
    return re.compile(pattern), handle


_PLATFORMS = (
    _Platform("linkedin", frozenset({"linkedin.com"}),
              (_profile(r"/(?:in|company|school|showcase)/([\w%.-]+)"),),
              subdomains=re.compile(r"(?:www\.|m\.|[a-z]{2}\.)?")),
    _Platform("x", frozenset({"twitter.com", "x.com"}), (_profile(r"/(\w{1,15})"),),
              _COMMON_RESERVED | {"intent", "i", "hashtag", "messages", "notifications",
                                  "compose", "status", "download", "en", "rules"}),
    _Platform("facebook", frozenset({"facebook.com", "fb.com"}),
              (_profile(r"/(?![\w.-]*\.php$)([\w.-]{2,80})"),
               _profile(r"/profile\.php\?id=\d+", None)),
              _COMMON_RESERVED | {"sharer", "sharer.php", "dialog", "plugins", "groups",
                                  "events", "watch", "marketplace", "gaming", "pages",
                                  "photo.php", "story.php", "permalink.php", "hashtag", "tr",
                                  "login.php", "ads", "people"},
              re.compile(r"(?:www\.|m\.|web\.|mobile\.|[a-z]{2}-[a-z]{2}\.)?"),
              frozenset({"id"})),
    _Platform("instagram", frozenset({"instagram.com"}), (_profile(r"/([\w.]{1,30})"),),
              _COMMON_RESERVED | {"p", "reel", "reels", "tv", "stories", "accounts",
                                  "direct", "developer", "web"}),
    _Platform("youtube", frozenset({"youtube.com"}),
              (_profile(r"/@([\w.-]{3,30})"), _profile(r"/channel/UC[\w-]{22}", None),
               _profile(r"/(?:c|user)/([\w.-]+)"))),
    _Platform("tiktok", frozenset({"tiktok.com"}), (_profile(r"/@([\w.]{2,24})"),)),
    _Platform("github", frozenset({"github.com"}), (_profile(r"/([A-Za-z0-9-]{1,39})"),),
              _COMMON_RESERVED | {"orgs", "topics", "marketplace", "sponsors", "enterprise",
                                  "collections", "trending", "events", "join", "new",
                                  "notifications", "site", "customer-stories", "readme",
                                  "team", "apps", "codespaces", "issues", "pulls"}),
    _Platform("pinterest", frozenset({"pinterest.com", "pinterest.co.uk", "pinterest.de",
                                      "pinterest.fr", "pinterest.ca", "pinterest.com.au",
                                      "pinterest.es", "pinterest.it"}),
              (_profile(r"/([\w.-]{3,30})"),),
              _COMMON_RESERVED | {"pin", "ideas", "today", "categories", "_", "resource"},
              re.compile(r"(?:www\.|[a-z]{2}\.)?")),
    _Platform("threads", frozenset({"threads.net", "threads.com"}),
              (_profile(r"/@([\w.]{1,30})"),)),
    _Platform("telegram", frozenset({"t.me", "telegram.me"}), (_profile(r"/(\w{4,32})"),),
              _COMMON_RESERVED | {"joinchat", "addstickers", "proxy", "iv", "setlanguage",
                                  "socks", "addtheme"}),
    _Platform("whatsapp", frozenset({"wa.me"}), (_profile(r"/(\d{7,15})"),)),
    _Platform("whatsapp", frozenset({"whatsapp.com"}), (_profile(r"/send\?phone=(\d{7,15})"),),
              subdomains=re.compile(r"(?:www\.|api\.)?"), keep_query=frozenset({"phone"})),
    # an invite code is the only stable name a server has: it is the handle
    _Platform("discord", frozenset({"discord.gg"}), (_profile(r"/([\w-]{2,32})"),)),
    _Platform("discord", frozenset({"discord.com", "discordapp.com"}),
              (_profile(r"/invite/([\w-]{2,32})"),)),
    _Platform("reddit", frozenset({"reddit.com"}),
              (_profile(r"/r/(\w{2,21})", "r/{0}"),
               _profile(r"/(?:u|user)/([\w-]{3,20})", "u/{0}")),
              subdomains=re.compile(r"(?:www\.|old\.|new\.|m\.)?")),
    _Platform("vimeo", frozenset({"vimeo.com"}), (_profile(r"/(?!\d+$)(\w{3,50})"),),
              _COMMON_RESERVED | {"watch", "channels", "groups", "categories", "upload",
                                  "join", "blog", "ondemand", "solutions", "enterprise",
                                  "create", "stock", "manage", "features", "log_in"}),
)
_BY_DOMAIN = {domain: platform for platform in _PLATFORMS for domain in platform.domains}


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
    platform = _BY_DOMAIN.get(domain)
    if platform is None:
        return _mastodon(hostname, path, domain, site, claimed, source_url)
    subdomain = hostname[: -len(domain)]
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


def _reserved(platform: _Platform, path: str) -> bool:
    first = path.lstrip("/").split("/", 1)[0].lower()
    return first in platform.reserved


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
    """Profiles are the same when their URLs differ only in case or a www./m. prefix."""
    return _PLAIN_HOST_PREFIX.sub("https://", profile.url.lower(), count=1)
