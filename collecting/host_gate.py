"""Politeness toward a site across every worker process: requests in flight and Crawl-delay.

A worker process already caps the requests it has open to one host (``crawler.host_slots``),
but a collection runs on several processes on several machines, so for its pages the cap and
robots.txt's ``Crawl-delay`` are kept in Redis, one gate per ``host:port``:

- a permit is a member of a sorted set scored by its expiry (a worker killed while holding one
  cannot hold it forever); at most ``cap`` unexpired members;
- with a Crawl-delay, a permit is also refused until ``delay`` after the last one granted;
- until the host's Crawl-delay is known (a worker reports it once it has read the site's
  robots.txt, with its first page: :meth:`HostGate.set_delay`), one permit at a time.

Each decision is one Lua script on the Redis clock, so the limit holds whatever the number of
workers. A refused caller is told how long to wait before asking again, so waiting pages cost
no busy loop.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from urllib.parse import urlsplit

from redis import Redis
from redis.client import Pipeline
from redis.exceptions import NoScriptError

#: Prefix of every key of a host's gate.
PREFIX = "webdata:host:"
#: Milliseconds a refused caller waits before asking again when the host is full (a permit
#: comes free when a page is done; a few tens of milliseconds on a fast site).
FULL_RETRY_MS = 50
#: Longest Crawl-delay obeyed, in seconds: a site asking for more is crawled at this pace
#: (Google ignores the directive; Bing caps it); a collection must end within its lifetime.
MAX_CRAWL_DELAY = 30.0

_ACQUIRE = """
-- KEYS: permits, next, delay; ARGV: cap, permit ms, token
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ms)
local known = redis.call('GET', KEYS[3])
local cap = tonumber(ARGV[1])
if not known then cap = 1 end  -- Crawl-delay unknown yet: one page at a time
if redis.call('ZCARD', KEYS[1]) >= cap then
  return tonumber(ARGV[4])
end
local delay = tonumber(known or '0')
if delay > 0 then
  local next_at = tonumber(redis.call('GET', KEYS[2]) or '0')
  if ms < next_at then return next_at - ms end
  redis.call('SET', KEYS[2], ms + delay, 'PX', delay + 60000)
end
redis.call('ZADD', KEYS[1], ms + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 0
"""


def host_of(url: str) -> str:
    """The gate a URL passes: its lower-case ``host:port`` (the port as written, if any)."""
    try:
        return urlsplit(url).netloc.lower().rpartition("@")[2]
    except ValueError:
        return url


class HostGate:
    """Permits to fetch from a host, shared by every worker on ``redis``.

    ``cap``: requests in flight per host at once; ``permit_seconds``: how long a permit lives
    unless released (longer than a page may take).
    """

    def __init__(self, redis: Redis, cap: int, permit_seconds: float):
        self.redis, self.cap, self.permit_ms = redis, cap, int(permit_seconds * 1000)
        self._acquire = redis.register_script(_ACQUIRE)

    def _keys(self, host: str) -> list[str]:
        base = PREFIX + host + ":"
        return [base + "permits", base + "next", base + "delay"]

    def acquire(self, host: str, token: str) -> int:
        """0 when ``token`` may fetch from ``host`` now (then :meth:`release` it), else the
        milliseconds to wait before asking again."""
        return self.exchange((), [(host, token)])[0]

    def release(self, *permits: tuple[str, str]) -> None:
        """Give back ``(host, token)`` permits, in one round trip."""
        self.exchange(permits, [])

    def exchange(self, releases: Iterable[tuple[str, str]],
                 asks: Sequence[tuple[str, str]]) -> list[int]:
        """Give back the ``releases`` permits, then :meth:`acquire` for each of ``asks``: one
        round trip for both, which is what a collection slice does on every turn of its loop.

        The script is run by its SHA alone: redis-py's pipelined scripts ask Redis whether
        they exist before every pipeline (a round trip more); one Redis lost (restarted,
        flushed) is loaded again and the asks are made once more.
        """
        releases = list(releases)
        if not releases and not asks:
            return []
        with self.redis.pipeline(transaction=False) as pipe:
            for host, token in releases:
                pipe.zrem(self._keys(host)[0], token)
            self._ask(pipe, asks)
            answers = pipe.execute(raise_on_error=False)[len(releases):]
        lost = [index for index, answer in enumerate(answers)
                if isinstance(answer, NoScriptError)]
        if lost:  # only those: an ask answered already holds its permit
            self.redis.script_load(self._acquire.script)
            with self.redis.pipeline(transaction=False) as pipe:
                self._ask(pipe, [asks[index] for index in lost])
                for index, answer in zip(lost, pipe.execute(), strict=True):
                    answers[index] = answer
        for answer in answers:
            if isinstance(answer, Exception):
                raise answer
        return [int(answer) for answer in answers]

    def _ask(self, pipe: Pipeline, asks: Sequence[tuple[str, str]]) -> None:
        for host, token in asks:
            pipe.evalsha(self._acquire.sha, 3, *self._keys(host), self.cap, self.permit_ms,
                         token, FULL_RETRY_MS)

    def set_delay(self, host: str, seconds: float, remember: float = 3600) -> None:
        """``host``'s robots.txt Crawl-delay (0: none; capped at :data:`MAX_CRAWL_DELAY`), as
        read by a worker; it is obeyed, and the host's full cap allowed, for the next
        ``remember`` seconds (then the next page reads it again)."""
        delay_ms = int(max(0.0, min(seconds, MAX_CRAWL_DELAY)) * 1000)
        _, next_key, delay_key = self._keys(host)
        if delay_ms:  # the page just fetched counts: the next one waits from now
            now_s, now_us = self.redis.time()
            self.redis.set(next_key, now_s * 1000 + now_us // 1000 + delay_ms,
                           px=delay_ms + 60000, nx=True)
        self.redis.set(delay_key, delay_ms, ex=int(remember))
