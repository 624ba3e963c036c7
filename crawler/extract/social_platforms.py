"""The social platforms the contact extractor knows: one table, one row per platform.

A row says which registrable domains the platform answers on, which subdomains are its plain
web front (``www.``, ``m.``…), the path shapes of a profile (matched whole, so a post under a
profile is not a profile), and two word lists that keep the platform's own pages out:

* ``reserved``: what a lone path segment can be besides a handle. ``twitter.com/followers``,
  ``/intent``, ``/home``; ``facebook.com/sharer``, ``/groups``; ``instagram.com/explore``;
  ``youtube.com/watch``, ``/results``… are the platform's pages, not accounts. Only a lone
  segment is checked: a profile under a fixed prefix (``linkedin.com/company/…``,
  ``youtube.com/channel/…``, ``reddit.com/r/…``) cannot be confused with one, so those
  platforms need no list, and a share link with a path (``/intent/tweet``,
  ``/sharer/sharer.php``) never matches a one-segment profile shape anyway.
* ``tabs``: last segments that show one view of a profile (``/@acme/videos``,
  ``/company/acme/about``); they are dropped, and the link counts as the profile itself.

No maintained library offers these lists: the one that parses profile URLs (``socials``) is
GPL-licensed, needs pydantic and reserves far fewer names (its Twitter list lacks
``followers``, ``intent/…`` is only refused by its pattern). So they are kept here, each from
the platform's own URL scheme; adding a platform or a name means editing this table only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PLAIN_SUBDOMAINS = re.compile(r"(?:www\.|m\.|mobile\.)?")
# The site's own (common) pages, shared by every platform with one-segment profiles.
_COMMON_RESERVED = frozenset({
    "about", "help", "legal", "login", "logout", "policies", "policy", "privacy", "search",
    "settings", "share", "signup", "terms", "tos", "home", "explore", "business", "careers",
    "developers", "jobs", "press", "security", "support", "contact", "pricing", "features",
})


@dataclass(frozen=True)
class Platform:
    name: str
    domains: frozenset[str]
    # fullmatch on path (plus the kept query); the handle is formatted from the groups
    profiles: tuple[tuple[re.Pattern[str], str | None], ...]
    reserved: frozenset[str] = frozenset()  # lower case, see the module docstring
    subdomains: re.Pattern[str] = PLAIN_SUBDOMAINS
    keep_query: frozenset[str] = frozenset()  # numeric identifiers a profile URL needs
    tabs: frozenset[str] = frozenset()  # lower case, see the module docstring


def _profile(pattern: str, handle: str | None = "{0}") -> tuple[re.Pattern[str], str | None]:
    return re.compile(pattern), handle


PLATFORMS = (
    Platform("linkedin", frozenset({"linkedin.com"}),
             (_profile(r"/(?:in|company|school|showcase)/([\w%.-]+)"),),
             subdomains=re.compile(r"(?:www\.|m\.|[a-z]{2}\.)?"),
             tabs=frozenset({"about", "posts", "jobs", "people", "life", "videos",
                             "events", "recent-activity", "details", "mycompany"})),
    Platform("x", frozenset({"twitter.com", "x.com"}), (_profile(r"/(\w{1,15})"),),
             _COMMON_RESERVED | {
                 "intent", "i", "hashtag", "messages", "notifications", "compose", "status",
                 "download", "en", "rules", "followers", "following", "lists", "topics",
                 "communities", "account", "bookmarks", "signin", "sessions", "oauth",
                 "connect", "who_to_follow", "verified", "premium", "widgets", "tweet"},
             tabs=frozenset({"with_replies", "media", "likes", "highlights", "articles",
                             "followers", "following", "verified_followers"})),
    Platform("facebook", frozenset({"facebook.com", "fb.com"}),
             (_profile(r"/(?![\w.-]*\.php$)([\w.-]{2,80})"),
              _profile(r"/profile\.php\?id=\d+", None)),
             _COMMON_RESERVED | {
                 "sharer", "sharer.php", "share.php", "dialog", "plugins", "groups",
                 "events", "watch", "marketplace", "gaming", "pages", "pg", "photo", "photos",
                 "photo.php", "video", "videos", "reel", "reels", "stories", "story.php",
                 "permalink.php", "hashtag", "tr", "login.php", "ads", "people", "media",
                 "notes", "messages", "friends", "bookmarks", "places", "fundraisers",
                 "public", "l.php", "home.php", "recover", "checkpoint", "campaign"},
             re.compile(r"(?:www\.|m\.|web\.|mobile\.|[a-z]{2}-[a-z]{2}\.)?"),
             frozenset({"id"}),
             frozenset({"about", "photos", "videos", "reviews", "events", "posts",
                        "community", "mentions", "reels"})),
    Platform("instagram", frozenset({"instagram.com"}), (_profile(r"/([\w.]{1,30})"),),
             _COMMON_RESERVED | {
                 "p", "reel", "reels", "tv", "stories", "accounts", "direct", "developer",
                 "web", "challenge", "emails", "s", "_u", "_n", "ar", "lite", "session"},
             tabs=frozenset({"reels", "tagged", "guides", "channel", "igtv"})),
    Platform("youtube", frozenset({"youtube.com"}),
             (_profile(r"/@([\w.·-]{3,30})"), _profile(r"/channel/(UC[\w-]{22})"),
              _profile(r"/(?:c|user)/([\w.-]+)"),
              # the legacy vanity form youtube.com/Name (letters and digits only)
              _profile(r"/([A-Za-z0-9]{3,30})")),
             _COMMON_RESERVED | {
                 "watch", "results", "embed", "shorts", "playlist", "feed", "channel", "c",
                 "user", "redirect", "t", "premium", "music", "kids", "gaming", "live",
                 "hashtag", "account", "signin", "upload", "howyoutubeworks", "creators",
                 "ads", "yt", "trends", "trending", "new", "store", "attribution_link",
                 "subscription_center", "oembed", "iframe_api", "v", "e", "movies", "tv",
                 "index", "select_site", "supported_browsers", "post", "source",
                 "podcasts", "originals", "channels", "playlists", "reporthistory",
                 "paid_memberships", "verify_age", "youtubei", "s", "musicpremium",
                 "copyright", "testtube"},
             tabs=frozenset({"featured", "videos", "shorts", "streams", "live", "playlists",
                             "community", "channels", "about", "podcasts", "releases",
                             "store", "courses", "posts", "search"})),
    Platform("tiktok", frozenset({"tiktok.com"}), (_profile(r"/@([\w.]{2,24})"),)),
    Platform("github", frozenset({"github.com"}), (_profile(r"/([A-Za-z0-9-]{1,39})"),),
             _COMMON_RESERVED | {
                 "orgs", "topics", "marketplace", "sponsors", "enterprise", "collections",
                 "trending", "events", "join", "new", "notifications", "site",
                 "customer-stories", "readme", "team", "apps", "codespaces", "issues",
                 "pulls", "organizations", "dashboard", "account", "sessions", "stars",
                 "watching", "resources", "solutions", "mobile", "premium-support",
                 "copilot", "education", "github", "discussions", "login"}),
    Platform("pinterest", frozenset({"pinterest.com", "pinterest.co.uk", "pinterest.de",
                                     "pinterest.fr", "pinterest.ca", "pinterest.com.au",
                                     "pinterest.es", "pinterest.it"}),
             (_profile(r"/([\w.-]{3,30})"),),
             _COMMON_RESERVED | {"pin", "ideas", "today", "categories", "_", "resource",
                                 "board", "business", "source", "videos", "shopping"},
             re.compile(r"(?:www\.|[a-z]{2}\.)?")),
    Platform("threads", frozenset({"threads.net", "threads.com"}),
             (_profile(r"/@([\w.]{1,30})"),)),
    Platform("telegram", frozenset({"t.me", "telegram.me"}), (_profile(r"/(\w{4,32})"),),
             _COMMON_RESERVED | {"joinchat", "addstickers", "proxy", "iv", "setlanguage",
                                 "socks", "addtheme", "addemoji", "contact", "boost"}),
    Platform("whatsapp", frozenset({"wa.me"}), (_profile(r"/(\d{7,15})"),)),
    Platform("whatsapp", frozenset({"whatsapp.com"}), (_profile(r"/send\?phone=(\d{7,15})"),),
             subdomains=re.compile(r"(?:www\.|api\.)?"), keep_query=frozenset({"phone"})),
    # an invite code is the only stable name a server has: it is the handle
    Platform("discord", frozenset({"discord.gg"}), (_profile(r"/([\w-]{2,32})"),)),
    Platform("discord", frozenset({"discord.com", "discordapp.com"}),
             (_profile(r"/invite/([\w-]{2,32})"),)),
    Platform("reddit", frozenset({"reddit.com"}),
             (_profile(r"/r/(\w{2,21})", "r/{0}"),
              _profile(r"/(?:u|user)/([\w-]{3,20})", "u/{0}")),
             subdomains=re.compile(r"(?:www\.|old\.|new\.|m\.)?")),
    # German-speaking countries' LinkedIn: people under /profile/, companies under /pages/
    # (/companies/ before 2019); every other page (jobs, news, share links) has its own prefix
    Platform("xing", frozenset({"xing.com"}),
             (_profile(r"/profile/(?!(?:edit|my_profile|\.+)$)([\w.-]{2,80})"),
              _profile(r"/(?:pages|companies)/(?!(?:new|search|\.+)$)([\w.-]{2,80})")),
             tabs=frozenset({"cv", "portfolio", "activities", "web_profiles", "about_us",
                             "about-us", "about", "updates", "jobs", "employees", "news",
                             "reviews", "contacts"})),
    Platform("vimeo", frozenset({"vimeo.com"}), (_profile(r"/(?!\d+$)(\w{3,50})"),),
             _COMMON_RESERVED | {"watch", "channels", "groups", "categories", "upload",
                                 "join", "blog", "ondemand", "solutions", "enterprise",
                                 "create", "stock", "manage", "features", "log_in"}),
)
BY_DOMAIN = {domain: platform for platform in PLATFORMS for domain in platform.domains}
