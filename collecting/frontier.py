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
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from redis import Redis

from collecting import frontier_lua as lua
from core.canonical import canonical_url
from core.contract import SkipReason
from core.scope import CrawlScope

#: What would refuse a URL's fetch, known before it (:class:`crawler.admission.KnownRefusals`):
#: the reason, or None.
Refusals = Callable[[str], SkipReason | None]

#: Prefix of every key of a collection's frontier.
PREFIX = "webdata:collection:"
#: The keys of one frontier (each under :data:`PREFIX` and the collection's id).
KEYS = ("queue", "seen", "leases", "meta", "overflow", "claims", "slices", "blocks",
        "skipped")
#: Seconds the keys of a finished collection's frontier are kept (a late worker still finds
#: them and stops cleanly), then dropped by Redis.
LINGER = 3600
#: The scripts of :mod:`collecting.frontier_lua` a frontier runs, by name.
SCRIPTS = ("admit", "lease", "renew", "claim", "give_back", "release", "state", "drain")
#: :meth:`Frontier.take`'s count by default: every entry queued.
EVERY = 2**31 - 1

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
    #: Refused after its fetch was tried (a duplicate; robots.txt or the policy only known
    #: then): it was admitted, and is a skip all the same.
    fetched: bool = False


def links_followed(scope: CrawlScope, links: Iterable[str], depth: int,
                   refusals: Refusals | None = None) -> list[Entry]:
    """The entries of ``links`` (a page's links, a site's sitemap URLs) that the crawl of
    ``scope`` follows, at ``depth`` (see :func:`sort_links`)."""
    return sort_links(scope, links, depth, refusals)[0]


def sort_links(scope: CrawlScope, links: Iterable[str], depth: int,
               refusals: Refusals | None = None) -> tuple[list[Entry], list[Skip]]:
    """``links`` found at ``depth`` as the crawl of ``scope`` takes them: the entries it
    follows, and the links it refuses with their reasons (:meth:`CrawlScope.refusal`, then
    ``refusals``: what would refuse the fetch, known before it; these come before ``depth``,
    being what the URL is, not where it was found)."""
    followed: list[Entry] = []
    refused: list[Skip] = []
    for link in links:
        key = canonical_url(link)
        reason = scope.refusal(link, depth, key)
        if refusals is not None and reason in (None, SkipReason.DEPTH):
            reason = refusals(link) or reason
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
        self._scripts = {name: redis.register_script(getattr(lua, name.upper()))
                         for name in SCRIPTS}

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
            args += [skip.key, int(skip.fetched)]
        new, skipped = self._scripts["admit"](
            keys=self._key("seen", "queue", "meta", "overflow", "skipped"), args=args)
        return int(new), [refused[int(index)] for index in skipped]

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

    def release_slot(self) -> None:
        """An entry admitted will have no result (its fetch was refused: it is a skip): its
        budget slot goes to the next URL waiting, as a duplicate's does."""
        self._scripts["release"](keys=self._key("claims", "meta", "overflow", "queue"))

    def left(self) -> int:
        """Entries admitted and not yet done or recorded (queued, leased, past the budget):
        after a stop, the skips still to be recorded."""
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.llen(self.keys["queue"])
            pipe.zcard(self.keys["leases"])
            pipe.llen(self.keys["overflow"])
            return sum(pipe.execute())

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

    def drain(self, count: int = 1000) -> list[Skip]:
        """Take up to ``count`` entries that will never be fetched now that the collection
        stopped (a cancel, the end of the money): those past the budget as ``limit`` skips,
        the leased and the queued as ``cancelled`` ones. Each is taken once, whoever asks."""
        past, left = self._scripts["drain"](keys=self._key("overflow", "leases", "queue"),
                                            args=[count])
        return ([Skip(entry.url, entry.key, SkipReason.LIMIT) for entry in map(Entry.loads, past)]
                + [Skip(entry.url, entry.key, SkipReason.CANCELLED)
                   for entry in map(Entry.loads, left)])

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
