"""The page cache's rules, framework-free: which answers may be kept, under which key, and for
how long a client may accept one (``max_age``; docs/api.md, Page cache).

An answer is kept under its operation, its page's canonical URL and the options that shape it
(every option, its default filled in: ``{}`` and the defaults spelled out are one entry),
never anything of an account's: pages are public, and one account's fetch serves another's
request. Only a successful answer is kept, and not when the page's response forbade it
(``Cache-Control: no-store`` or ``private``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from core.canonical import canonical_url

#: The most ``max_age`` may be: 30 days, in seconds.
MAX_AGE = 30 * 24 * 3600
#: Redis key prefix of a fetch being made for an entry (its key follows): the id of the job
#: making it. Identical requests meanwhile share that job's answer instead of fetching; the
#: worker ends the claim once the answer is kept (``api.page_cache``, ``worker.page_cache``).
FILLING = "webdata:page-cache:filling:"
#: A job's answer says, under this key, whether the worker keeps it (the page allows a shared
#: cache to): only then may identical requests share it.
KEEPING = "cache_keeping"
#: Ends a claim if it is still the given job's (KEYS[1] the claim, ARGV[1] the job's id).
END_CLAIM = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
#: ``Cache-Control`` directives of a response that keep it out of a shared cache (RFC 9111,
#: 5.2.2.5 and 5.2.2.7).
FORBIDDING = frozenset({"no-store", "private"})


def cache_key(operation: str, url: str, options: Mapping[str, Any]) -> str:
    """The key of ``operation``'s answer on ``url`` with ``options`` (every option the
    operation has, defaults included): a SHA-256 of them, in hex."""
    text = json.dumps([operation, canonical_url(url), dict(options)], sort_keys=True,
                      separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def shared_url(url: str) -> bool:
    """Whether answers for ``url`` may be shared through the cache: its canonical form (the
    key) drops nothing of its query. Tracking parameters (``utm_*``, ``mc_eid``, ``mkt_tok``…)
    can carry one person's token, and a page may be personalised by it: such a URL neither
    reads nor fills the cache."""
    try:
        asked = sorted(parse_qsl(urlsplit(url.strip()).query, keep_blank_values=True))
        kept = sorted(parse_qsl(urlsplit(canonical_url(url)).query, keep_blank_values=True))
    except ValueError:
        return False
    return asked == kept


def storable(cache_control: str | None) -> bool:
    """Whether a response with this ``Cache-Control`` header (None: none) may be kept in a
    cache shared by every account."""
    if not cache_control:
        return True
    directives = {part.split("=", 1)[0].strip().lower() for part in cache_control.split(",")}
    return not directives & FORBIDDING
