"""A collection's frontier in Redis, shared by every worker process on every machine: the one
implementation of the collections' rules of admission, for the workers' slices
(:mod:`collecting.slice`) and for ``scrapy crawl site|batch`` alike (on a Redis of its own,
:mod:`collecting.private_redis`), so the two cannot drift apart.

Why not scrapy-redis's scheduler as it is: it pops a request by deleting it (a worker killed
mid-page loses that page), it binds one frontier to one spider per crawler (our workers feed
the pages of every job to one long-lived crawler, :mod:`crawler.feed`), and it has no notion of
"finished". What this module keeps of its design: one set of keys per crawl, a seen-set
beside the queue, JSON entries. What it adds, each step one Lua script (atomic on the Redis
server, whatever the number of workers):

- **admission** (:meth:`Frontier.admit`): a URL enters once (its canonical form in the
  seen-set) and only while the collection's page budget lasts (``max_pages``, counted in the
  same step, so the limit is exact under any race);
- **leases** (:meth:`Frontier.lease`): taking an entry moves it to a sorted set scored by its
  expiry on the Redis clock; it is acknowledged (:meth:`Frontier.ack`) only after its result is
  stored, renewed while its page is in flight, and an expired lease (its worker was killed)
  goes back to the front of the queue at the next lease by anyone;
- **claims** (:meth:`Frontier.claim`): after a fetch, the page's final URL and
  ``rel=canonical`` are claimed for it; a page whose address another page claimed first is a
  duplicate (not stored, not charged), and its budget slot goes to the next URL in line;
- **idleness** (:meth:`Frontier.state`): queue and leases read in one step; a collection
  whose frontier is seeded and idle is finished.

What enters and what a page claims are decided here too, by canonical URL
(:meth:`Entry.of`, :func:`links_followed`, :func:`page_addresses`). Scrapy's own dupefilter
cannot do this: it fingerprints requests (method, URL with its tracking parameters, body), not
pages, and knows nothing of budgets or redirects.

An entry is ``{"u": url to fetch, "k": its canonical URL, "d": depth}`` as JSON.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from redis import Redis

from core.canonical import canonical_url
from core.contract import SkipReason
from core.scope import CrawlScope

#: Prefix of every key of a collection's frontier.
PREFIX = "webdata:collection:"
#: The keys of one frontier (each under :data:`PREFIX` and the collection's id).
KEYS = ("queue", "seen", "leases", "meta", "overflow", "claims", "slices", "blocks",
        "skipped")
#: Seconds the keys of a finished collection's frontier are kept (a late worker still finds
#: them and stops cleanly), then dropped by Redis.
LINGER = 3600
#: :meth:`Frontier.take`'s count by default: every entry queued.
EVERY = 2**31 - 1

_ADMIT = """
-- KEYS: seen, queue, meta, overflow, skipped; ARGV: budget (0: none), how many entries, then
-- (key, entry) pairs, then (key, reason) pairs of URLs refused. A refused URL is a skip once
-- (the skipped set), and not at all when it was admitted (a duplicate excepted: it was).
local budget = tonumber(ARGV[1])
local last = 2 + 2 * tonumber(ARGV[2])
local admitted = tonumber(redis.call('HGET', KEYS[3], 'admitted') or '0')
local new = 0
for i = 3, last, 2 do
  if redis.call('SADD', KEYS[1], ARGV[i]) == 1 then
    if budget == 0 or admitted < budget then
      redis.call('RPUSH', KEYS[2], ARGV[i + 1])
      admitted = admitted + 1
      new = new + 1
    else
      redis.call('RPUSH', KEYS[4], ARGV[i + 1])
    end
  end
end
redis.call('HSET', KEYS[3], 'admitted', admitted)
local skipped = {}
for i = last + 1, #ARGV, 2 do
  if (ARGV[i + 1] == 'duplicate' or redis.call('SISMEMBER', KEYS[1], ARGV[i]) == 0)
      and redis.call('SADD', KEYS[5], ARGV[i]) == 1 then
    skipped[#skipped + 1] = (i - last - 1) / 2
  end
end
return {new, skipped}
"""

_LEASE = """
-- KEYS: queue, leases; ARGV: how many, lease ms
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ms)
for _, entry in ipairs(expired) do
  redis.call('ZREM', KEYS[2], entry)
  redis.call('LPUSH', KEYS[1], entry)
end
local taken = {}
for i = 1, tonumber(ARGV[1]) do
  local entry = redis.call('LPOP', KEYS[1])
  if not entry then break end
  redis.call('ZADD', KEYS[2], ms + tonumber(ARGV[2]), entry)
  taken[#taken + 1] = entry
end
return taken
"""

_RENEW = """
-- KEYS: leases; ARGV: lease ms, entries…
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
for i = 2, #ARGV do
  redis.call('ZADD', KEYS[1], 'XX', ms + tonumber(ARGV[1]), ARGV[i])
end
return 1
"""

_GIVE_BACK = """
-- KEYS: leases, queue; ARGV: entries. Only entries still leased go back (not acknowledged
-- ones, nor ones whose lease expired and went back already).
for i = #ARGV, 1, -1 do
  if redis.call('ZREM', KEYS[1], ARGV[i]) == 1 then
    redis.call('LPUSH', KEYS[2], ARGV[i])
  end
end
return 1
"""

_CLAIM = """
-- KEYS: claims, meta, overflow, queue; ARGV: the page's own key, then its other addresses
-- A page is a duplicate when one of its addresses belongs to another page already; then it
-- gives its budget slot back (the next URL in line gets it) and claims nothing.
local own = ARGV[1]
for i = 1, #ARGV do
  local owner = redis.call('HGET', KEYS[1], ARGV[i])
  if owner and owner ~= own then
    redis.call('HINCRBY', KEYS[2], 'duplicates', 1)
    local next_entry = redis.call('LPOP', KEYS[3])
    if next_entry then
      redis.call('RPUSH', KEYS[4], next_entry)
    else
      redis.call('HINCRBY', KEYS[2], 'admitted', -1)
    end
    return owner
  end
end
for i = 1, #ARGV do
  redis.call('HSET', KEYS[1], ARGV[i], own)
end
return false
"""

_STATE = """
-- KEYS: queue, leases, meta
local meta = redis.call('HMGET', KEYS[3], 'admitted', 'duplicates', 'seeded', 'cancelled')
return {redis.call('LLEN', KEYS[1]), redis.call('ZCARD', KEYS[2]),
        meta[1] or '0', meta[2] or '0', meta[3] or '', meta[4] or ''}
"""


@dataclass(frozen=True)
class Entry:
    """One URL of the frontier."""

    url: str
    key: str  #: its canonical URL
    depth: int

    def dumps(self) -> str:
        return json.dumps({"u": self.url, "k": self.key, "d": self.depth},
                          separators=(",", ":"))

    @classmethod
    def loads(cls, raw: bytes | str) -> Entry:
        data = json.loads(raw)
        return cls(url=data["u"], key=data["k"], depth=int(data["d"]))

    @classmethod
    def of(cls, url: str, depth: int) -> Entry:
        """``url`` at ``depth``, keyed by its canonical form."""
        return cls(url, canonical_url(url), depth)


@dataclass(frozen=True)
class Skip:
    """A URL the collection saw and will not fetch, and why (a :class:`SkipReason`);
    ``duplicate_of``: the canonical URL of the page it duplicates."""

    url: str
    key: str  #: its canonical URL
    reason: str
    duplicate_of: str | None = None


def links_followed(scope: CrawlScope, links: Iterable[str], depth: int) -> list[Entry]:
    """The entries of ``links`` (a page's links, a site's sitemap URLs) that the crawl of
    ``scope`` follows, at ``depth``."""
    return sort_links(scope, links, depth)[0]


def sort_links(scope: CrawlScope, links: Iterable[str], depth: int
               ) -> tuple[list[Entry], list[Skip]]:
    """``links`` found at ``depth`` as the crawl of ``scope`` takes them: the entries it
    follows, and the links it refuses with their reasons (:meth:`CrawlScope.refusal`)."""
    followed: list[Entry] = []
    refused: list[Skip] = []
    for link in links:
        key = canonical_url(link)
        reason = scope.refusal(link, depth, key)
        if reason is None:
            followed.append(Entry(link, key, depth))
        else:
            refused.append(Skip(link, key, reason))
    return followed, refused


def page_addresses(final_url: str | None, canonical: str | None) -> list[str]:
    """What a page fetched in a crawl claims (:meth:`Frontier.claim`): the canonical forms of
    its final URL (after redirects) and of its ``rel=canonical``. A batch claims nothing: it
    fetches what it lists."""
    return [canonical_url(address) for address in (final_url, canonical) if address]


@dataclass(frozen=True)
class State:
    queued: int
    leased: int
    admitted: int
    duplicates: int
    seeded: bool
    cancelled: bool

    @property
    def idle(self) -> bool:
        """Nothing waits and nothing is in flight: with a seeded frontier, the end."""
        return not self.queued and not self.leased

    @property
    def total(self) -> int:
        """Pages that have or will have a result."""
        return self.admitted


class Frontier:
    """The frontier of collection ``collection_id`` on ``redis``."""

    def __init__(self, redis: Redis, collection_id: str):
        self.redis = redis
        base = PREFIX + collection_id + ":"
        self.keys = {name: base + name for name in KEYS}
        self._scripts = {name: redis.register_script(source) for name, source in (
            ("admit", _ADMIT), ("lease", _LEASE), ("renew", _RENEW), ("claim", _CLAIM),
            ("give_back", _GIVE_BACK),
            ("state", _STATE))}

    def _key(self, *names: str) -> list[str]:
        return [self.keys[name] for name in names]

    def admit(self, entries: list[Entry], budget: int = 0) -> int:
        """Queue the entries not seen before, while the budget (pages in all; 0: none)
        lasts; returns how many were queued now."""
        return self.decide(entries, (), budget)[0] if entries else 0

    def decide(self, entries: list[Entry], refused: Iterable[Skip], budget: int = 0
               ) -> tuple[int, list[Skip]]:
        """:meth:`admit` ``entries``, and in the same step decide which of the ``refused``
        URLs are skips now: each URL once in the collection's life, and none that was admitted
        (a duplicate excepted, it was). How many entries were queued, and the new skips."""
        refused = list(refused)
        if not entries and not refused:
            return 0, []
        args: list[Any] = [budget, len(entries)]
        for entry in entries:
            args += [entry.key, entry.dumps()]
        for skip in refused:
            args += [skip.key, skip.reason]
        new, skipped = self._scripts["admit"](
            keys=self._key("seen", "queue", "meta", "overflow", "skipped"), args=args)
        return int(new), [refused[int(index)] for index in skipped]

    def drain_overflow(self, count: int = 1000) -> list[Skip]:
        """Take up to ``count`` entries admitted past the budget: with the frontier idle,
        nothing will give them a slot any more, they are skips (``limit``). Each is taken
        once, whoever asks."""
        raw = self.redis.lpop(self.keys["overflow"], count) or []
        return [Skip(entry.url, entry.key, SkipReason.LIMIT)
                for entry in map(Entry.loads, raw)]

    def lease(self, count: int, seconds: float) -> list[Entry]:
        """Take up to ``count`` entries for ``seconds`` (expired leases come back first)."""
        if count <= 0:
            return []
        raw = self._scripts["lease"](keys=self._key("queue", "leases"),
                                     args=[count, int(seconds * 1000)])
        return [Entry.loads(item) for item in raw]

    def take(self, count: int = EVERY) -> list[Entry]:
        """Take up to ``count`` entries (by default every one queued) for good: leased and
        acknowledged at once. For a crawl in one process (``scrapy crawl site|batch``), where
        no other process could fetch a page whose taker died."""
        taken = self.lease(count, LINGER)
        self.ack(taken)
        return taken

    def renew(self, entries: list[Entry], seconds: float) -> None:
        if entries:
            self._scripts["renew"](keys=self._key("leases"),
                                   args=[int(seconds * 1000), *(e.dumps() for e in entries)])

    def give_back(self, entries: list[Entry]) -> None:
        """Return leased entries not started to the front of the queue, in their order."""
        if entries:
            self._scripts["give_back"](keys=self._key("leases", "queue"),
                                       args=[entry.dumps() for entry in entries])

    def ack(self, entries: list[Entry]) -> None:
        """The entries' results are stored (or they will never have one): drop their leases."""
        if entries:
            self.redis.zrem(self.keys["leases"], *(entry.dumps() for entry in entries))

    def claim(self, entry: Entry, addresses: list[str]) -> str | None:
        """Claim ``addresses`` (canonical URLs: the page's final URL, its ``rel=canonical``)
        for ``entry``; the canonical URL of the page that owns one of them already (``entry``
        is a duplicate of it), or None."""
        owner = self._scripts["claim"](
            keys=self._key("claims", "meta", "overflow", "queue"),
            args=[entry.key, *dict.fromkeys(a for a in addresses if a != entry.key)])
        return owner.decode() if owner else None

    def state(self) -> State:
        queued, leased, admitted, duplicates, seeded, cancelled = self._scripts["state"](
            keys=self._key("queue", "leases", "meta"))
        return State(int(queued), int(leased), int(admitted), int(duplicates),
                     bool(seeded), bool(cancelled))

    def mark(self, flag: str) -> bool:
        """Set ``flag`` (``seeded``, ``cancelled``…) once; whether this call set it."""
        return bool(self.redis.hsetnx(self.keys["meta"], flag, 1))

    def flag(self, flag: str) -> bool:
        return bool(self.redis.hexists(self.keys["meta"], flag))

    def set_width(self, slices: int) -> None:
        """Record how many slices run this collection at once (the first seeder's word)."""
        self.redis.hsetnx(self.keys["meta"], "width", slices)

    def width(self) -> int:
        """How many slices run this collection at once (1 before :meth:`set_width`)."""
        return int(self.redis.hget(self.keys["meta"], "width") or 1)

    def linger(self, seconds: int = LINGER) -> None:
        """Let the keys expire: the collection is final."""
        with self.redis.pipeline(transaction=False) as pipe:
            for key in self.keys.values():
                pipe.expire(key, seconds)
            pipe.execute()

    def drop_leases(self) -> int:
        """Forget every lease (a cancelled collection): how many there were."""
        with self.redis.pipeline() as pipe:
            pipe.zcard(self.keys["leases"])
            pipe.delete(self.keys["leases"], self.keys["queue"], self.keys["overflow"])
            count, _ = pipe.execute()
        return int(count)

    def add_slice(self, job_id: str) -> None:
        """Remember slice job ``job_id`` as this collection's (see :meth:`slices`)."""
        self.redis.sadd(self.keys["slices"], job_id)

    def drop_slice(self, job_id: str) -> None:
        self.redis.srem(self.keys["slices"], job_id)

    def slices(self) -> set[str]:
        """Ids of the slice jobs queued or running for this collection, as they recorded
        themselves (a killed one stays until the watchdog sees its job is gone)."""
        return {member.decode() for member in self.redis.smembers(self.keys["slices"])}

    def beat(self) -> None:
        """Record progress now (the watchdog's measure of a stalled collection)."""
        self.redis.hset(self.keys["meta"], "beat", f"{time.time():.3f}")

    def idle_for(self) -> float:
        """Seconds since the last :meth:`beat`; the first look starts the clock."""
        raw = self.redis.hget(self.keys["meta"], "beat")
        if raw is None:
            self.beat()
            return 0.0
        return max(0.0, time.time() - float(raw))
