"""Per-account cap on single-page jobs in flight: one account cannot fill every worker slot.

Without it, ten slow requests of one account took every worker slot, and another account's
request waited 58 s behind them. Each single-page request takes one of its account's
``max_concurrent_requests`` slots (a plan field) before its job is enqueued, and gives it back
when the job's answer is in: the worker does, in the round trip of the job's early reply
(:class:`Held`, :mod:`worker.replies`), or else the request when it ends. A request over the
cap is refused at once, 429 ``rate_limited`` with ``Retry-After: 1``: it never waits for a
slot, because a waiting request holds one of the API's few threads (``API_PROCESSES`` x
``API_THREADS``), and one account's burst of waiters would then block every other account's
requests at the API instead of at the workers.

The slots of an account are a Redis sorted set (``webdata:inflight:<account id>``) shared by
every API process and host: member = the request id, score = the slot's lease expiry in
milliseconds of the Redis server's clock. Taking a slot is one Lua script, so two requests
can never both take the last one; it first drops leases that expired, so the slot of an API
process killed mid-request (no ``finally`` ran) frees itself after the request's lifetime.
Leases are read on the Redis clock (``TIME``), never the API hosts': their clocks may differ.

Answers that stream to the client (a results page, an export) hold their slot until the answer
is sent or the client went away (:func:`hold_until_sent`): a client that reads slowly holds an
API thread for that long, and so counts as a request in flight. Exports also take a slot of a
second, smaller pool (:data:`EXPORTS`): one account streaming several exports and reading
none cannot take every stream a server can serve.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from datetime import timedelta

from flask import Response, after_this_request
from redis import Redis
from redis.exceptions import RedisError

from api.errors import ApiError

logger = logging.getLogger(__name__)

#: The pools of slots, each the prefix of its accounts' keys: requests in flight (capped by
#: the plan's ``max_concurrent_requests``), exports streaming (:data:`EXPORTS_PER_ACCOUNT`).
REQUESTS = "webdata:inflight:"
EXPORTS = "webdata:exports:"
#: Exports one account may stream at once, on every API process together.
EXPORTS_PER_ACCOUNT = 2
#: ``Retry-After`` (seconds) of a request refused over the cap: single pages often end within
#: a second, and the client, not an API thread, is the one to wait.
RETRY_AFTER = 1

#: KEYS[1] the account's set; ARGV: member, cap, lease (ms). 1 if the member holds a slot now
#: (taken, or held already: a retry of the same request takes no second one), else 0. The key
#: lives as long as its longest lease, so an idle account leaves nothing behind.
ACQUIRE = """
if redis.replicate_commands then redis.replicate_commands() end -- writes after TIME (Redis < 5)
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local lease = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now_ms)
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
    return 0
  end
end
redis.call('ZADD', KEYS[1], now_ms + lease, ARGV[1])
if redis.call('PTTL', KEYS[1]) < lease then
  redis.call('PEXPIRE', KEYS[1], lease)
end
return 1
"""


def key(account_id: str, pool: str = REQUESTS) -> str:
    return pool + account_id


def try_acquire(redis: Redis, account_id: str, member: str, cap: int, lease: timedelta,
                pool: str = REQUESTS) -> bool:
    """Take one of the account's ``cap`` slots for ``member`` for ``lease``, if one is free.

    A cap below 1 counts as 1: the database refuses such a plan, and 0 would refuse every
    request. Raises RedisError.
    """
    script = redis.register_script(ACQUIRE)  # EVALSHA, loading the script when Redis lacks it
    lease_ms = max(1, int(lease.total_seconds() * 1000))
    return bool(script(keys=[key(account_id, pool)], args=[member, max(1, cap), lease_ms]))


def release(redis: Redis, account_id: str, member: str, pool: str = REQUESTS) -> None:
    """Give ``member``'s slot back. Raises RedisError."""
    redis.zrem(key(account_id, pool), member)


def held(redis: Redis, account_id: str, pool: str = REQUESTS) -> int:
    """Slots of the account held now, expired leases included (for tests and operators)."""
    return int(redis.zcard(key(account_id, pool)))


def unavailable() -> ApiError:
    return ApiError("unavailable", "The job queue is unreachable; try again shortly.")


def over_cap(cap: int, pool: str = REQUESTS) -> ApiError:
    """The refusal of a request over its account's cap: 429 ``rate_limited`` (the contract's
    code for an account over its request rate) with ``Retry-After: 1``; its answer gets the
    rate limiter's ``RateLimit-*`` headers as every answer does
    (``api.factory._finish_request``)."""
    what = ("requests in flight (its plan's max_concurrent_requests)" if pool == REQUESTS
            else "exports streaming")
    return ApiError(
        "rate_limited", f"This account already has {max(1, cap)} {what}; retry when one has "
        "finished.", headers={"Retry-After": str(RETRY_AFTER)})


def take(
    redis: Redis, account_id: str, member: str, cap: int, *, lease: timedelta,
    unreachable: bool = False, pool: str = REQUESTS,
) -> None:
    """Take one of the account's slots for ``member``; give it back with :func:`give_back`.

    Raises ApiError 429 ``rate_limited`` at once when every slot is taken (:func:`over_cap`;
    nothing is charged: the caller releases the reservation), 503 ``unavailable`` when Redis
    fails, at once when ``unreachable`` (the rate limiter just waited for Redis in vain).
    """
    if unreachable:
        raise unavailable()
    try:
        taken = try_acquire(redis, account_id, member, cap, lease, pool)
    except RedisError as exc:
        logger.error("Redis unavailable: %s", exc)
        raise unavailable() from None
    if not taken:
        raise over_cap(cap, pool)


def give_back(redis: Redis, account_id: str, member: str, pool: str = REQUESTS) -> None:
    """Give a slot back; when Redis fails, its lease frees it (the answer is not at fault)."""
    try:
        release(redis, account_id, member, pool)
    except RedisError as exc:
        logger.warning("Could not release the slot of %s (its lease will): %s", member, exc)


class Held:
    """A slot held by a request: ``member`` of the set ``key``. When the job gave it back
    itself (its early reply, :mod:`worker.replies`), it is marked :attr:`given_back`, and
    :func:`slot` makes no round trip of its own to give it back."""

    def __init__(self, account_id: str, member: str):
        self.key, self.member = key(account_id), member
        self.given_back = False


@contextlib.contextmanager
def slot(
    redis: Redis, account_id: str, member: str, cap: int, *, lease: timedelta,
    unreachable: bool = False,
) -> Iterator[Held]:
    """Hold one of the account's slots for the ``with`` block (:func:`take`), given back
    when it ends unless the job gave it back already."""
    take(redis, account_id, member, cap, lease=lease, unreachable=unreachable)
    held = Held(account_id, member)
    try:
        yield held
    finally:
        if not held.given_back:
            give_back(redis, account_id, member)


def hold_until_sent(redis: Redis, account_id: str, member: str, cap: int, *, lease: timedelta,
                    pool: str = REQUESTS) -> None:
    """Take a slot (:func:`take`) for the answer of this Flask request, given back once the
    answer is sent or its client went away (the response's close, also for an error answer)."""
    take(redis, account_id, member, cap, lease=lease, pool=pool)

    @after_this_request
    def when_sent(response: Response) -> Response:
        response.call_on_close(lambda: give_back(redis, account_id, member, pool))
        return response
